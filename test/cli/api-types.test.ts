import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { components, FollowOptions as ClientFollowOptions, paths, PathsWithMethod } from '@plant-store/client';
import type { ApiPath, ClientModule, FollowOptions } from '../../src/cli/api.js';
import type { NewPlantInput } from '../../src/cli/plant-args.js';
import type { ImportQuery, ListQuery } from '../../src/cli/plants-http.js';
import type { CreatedTokenAnswer, NewTokenBody, RevokeQuery, TokenListQuery } from '../../src/cli/tokens-http.js';
import type { CreatedEndpointAnswer, DeliveryQuery, EndpointListQuery, NewEndpointBody } from '../../src/cli/webhooks-http.js';
import type { Delivery, Endpoint } from '../../src/webhooks/schema.js';
import type { PlantId, StoredPlant } from '../../src/model/plant.js';
import type { TokenRecord } from '../../src/store/store.js';

/**
 * The CLI reaches a service through @plant-store/client, loaded at run time from the bundle the build makes:
 * the service's own build cannot import the package, whose types are generated from the built service. What
 * the CLI takes for the API (its paths, the parameters it sends, the answers it reads) is held here to the
 * package's generated types: a change to the API that the CLI does not follow fails `npm run check`.
 */

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** A fits B: assignable, and with no key B does not have (a misspelt parameter would be sent, and refused). */
type Fits<A, B> = [A] extends [B] ? ([keyof A] extends [keyof B] ? true : false) : false;
type Schemas = components['schemas'];

// The CLI's calls exist in the document, with their methods.
const gets: Array<PathsWithMethod<'get'>> = ['/plants', '/plants/{id}', '/tokens', '/webhooks', '/webhooks/{id}/deliveries'] satisfies ApiPath[];
const posts: Array<PathsWithMethod<'post'>> = ['/plants', '/plants/import', '/tokens', '/webhooks'] satisfies ApiPath[];
const deletes: Array<PathsWithMethod<'delete'>> = ['/plants/{id}', '/tokens/{id}', '/webhooks/{id}'] satisfies ApiPath[];

const checks: [
  // The parameters it sends are the operations' own.
  Fits<ListQuery, NonNullable<paths['/plants']['get']['parameters']['query']>>,
  Fits<ImportQuery, NonNullable<paths['/plants/import']['post']['parameters']['query']>>,
  Fits<{ id: PlantId }, paths['/plants/{id}']['get']['parameters']['path']>,
  Fits<{ id: PlantId }, paths['/plants/{id}']['delete']['parameters']['path']>,
  Fits<TokenListQuery, NonNullable<paths['/tokens']['get']['parameters']['query']>>,
  Fits<RevokeQuery, NonNullable<paths['/tokens/{id}']['delete']['parameters']['query']>>,
  Fits<{ id: string }, paths['/tokens/{id}']['delete']['parameters']['path']>,
  Fits<{ 'idempotency-key': string }, NonNullable<paths['/tokens']['post']['parameters']['header']>>,
  Fits<EndpointListQuery, NonNullable<paths['/webhooks']['get']['parameters']['query']>>,
  Fits<DeliveryQuery, NonNullable<paths['/webhooks/{id}/deliveries']['get']['parameters']['query']>>,
  Fits<{ id: string }, paths['/webhooks/{id}/deliveries']['get']['parameters']['path']>,
  Fits<{ id: string }, paths['/webhooks/{id}']['delete']['parameters']['path']>,
  Fits<{ 'idempotency-key': string }, NonNullable<paths['/webhooks']['post']['parameters']['header']>>,
  // What it sends and reads is what the document says.
  Same<Schemas['NewPlant'], NewPlantInput>,
  Same<Schemas['StoredPlant'], StoredPlant>,
  Same<Schemas['Plant'], { name: string; tag?: string }>,
  Same<Schemas['ImportResult'], { created: number; replaced: number }>,
  Same<Schemas['NewToken'], NewTokenBody>,
  Same<Schemas['Token'], TokenRecord>,
  Same<Schemas['CreatedToken'], CreatedTokenAnswer>,
  Same<NonNullable<paths['/tokens']['post']['requestBody']>['content']['application/json'], NewTokenBody>,
  Same<paths['/tokens']['get']['responses'][200]['content']['application/json'], TokenRecord[]>,
  Same<paths['/tokens']['post']['responses'][201]['content']['application/json'], CreatedTokenAnswer>,
  Same<NonNullable<paths['/webhooks']['post']['requestBody']>['content']['application/json'], NewEndpointBody>,
  Same<paths['/webhooks']['post']['responses'][201]['content']['application/json'], CreatedEndpointAnswer>,
  Same<paths['/webhooks']['get']['responses'][200]['content']['application/json'], Endpoint[]>,
  Same<paths['/webhooks/{id}/deliveries']['get']['responses'][200]['content']['application/json'], Delivery[]>,
  // What it gives the change feed's follower is the package's FollowOptions.
  Fits<FollowOptions, ClientFollowOptions>,
] = [
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
];

test("the CLI's view of the API is the client package's: paths, parameters, answers; the bundle it loads is the client", async () => {
  assert.deepEqual(
    [gets, posts, deletes, checks.every(Boolean)],
    [
      ['/plants', '/plants/{id}', '/tokens', '/webhooks', '/webhooks/{id}/deliveries'],
      ['/plants', '/plants/import', '/tokens', '/webhooks'],
      ['/plants/{id}', '/tokens/{id}', '/webhooks/{id}'],
      true,
    ],
  );
  // The bundle the CLI loads (scripts/client-bundle.mjs) beside the compiled service: the package's createClient.
  const bundle = (await import(new URL('../../client/index.js', import.meta.url).href)) as ClientModule;
  const client = bundle.createClient({ baseUrl: 'http://127.0.0.1:9', headers: {} });
  assert.equal(typeof client.request, 'function');
  assert.equal(typeof bundle.followEvents, 'function');
  assert.equal(typeof bundle.FollowError, 'function');
});
