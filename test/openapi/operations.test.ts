import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { testApp } from '../helpers.js';
import { operation, PLANT_OPERATIONS, PUBLIC_OPERATIONS, resolve, type Json } from './walk.js';

/**
 * What the OpenAPI document says of the operations: the specification's NewPlant, Plant and Error and its
 * bearerAuth, POST /plants as specified, Idempotency-Key on every POST, who may call what, the headers, the
 * paging and the merge patch, and the webhooks (the events sent, the endpoints managed).
 */

describe('GET /openapi.json: the operations', async () => {
  const t = await testApp(after);
  const doc: Json = (await t.call('GET', '/openapi.json', { token: null })).json();
  const schemas = doc.components?.schemas ?? {};
  const op = (key: string): Json => operation(doc, key);

  it("keeps the specification's NewPlant, Plant and Error", () => {
    const { NewPlant, Plant, Error: ErrorSchema } = schemas;
    assert.equal(NewPlant.type, 'object');
    assert.deepEqual([...NewPlant.required].sort(), ['id', 'name']);
    assert.deepEqual(NewPlant.properties.id, { ...NewPlant.properties.id, type: 'integer', format: 'int64' });
    assert.equal(NewPlant.properties.name.type, 'string');
    assert.equal(NewPlant.properties.tag.type, 'string');
    assert.equal(Plant.type, 'object');
    assert.deepEqual(Plant.required, ['name']);
    assert.deepEqual(Object.keys(Plant.properties).sort(), ['name', 'tag']);
    assert.equal(ErrorSchema.type, 'object');
    assert.deepEqual([...ErrorSchema.required].sort(), ['error', 'message']);
    assert.equal(ErrorSchema.properties.error.type, 'integer');
    assert.equal(ErrorSchema.properties.error.format, 'int32');
    assert.equal(ErrorSchema.properties.message.type, 'string');
  });

  it('states the length limits it enforces', () => {
    assert.equal(schemas.NewPlant.properties.name.minLength, 1);
    assert.equal(schemas.NewPlant.properties.name.maxLength, 256);
    assert.equal(schemas.NewPlant.properties.tag.maxLength, 64);
  });

  it("declares bearerAuth, the specification's scheme", () => {
    assert.deepEqual(doc.components.securitySchemes.bearerAuth, { ...doc.components.securitySchemes.bearerAuth, type: 'http', scheme: 'bearer' });
  });

  it('POST /plants: body NewPlant, 200 Plant, 400 Error, and its other statuses', () => {
    const post = op('post /plants');
    assert.equal(post.requestBody.required, true);
    assert.deepEqual(post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/NewPlant' });
    assert.deepEqual(post.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/Plant' });
    for (const status of ['400', '401', '403', '412', '413', '415']) {
      assert.deepEqual(post.responses[status]?.content['application/json'].schema, { $ref: '#/components/schemas/Error' }, status);
    }
  });

  it('declares Idempotency-Key on every POST, with its 409 and 422 and the Idempotent-Replayed answer header', () => {
    const posts = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, item]) =>
      item.post ? [[path, item.post] as const] : [],
    );
    assert.deepEqual(posts.map(([path]) => path).sort(), [
      '/plants',
      '/plants/import',
      '/tokens',
      '/webhooks',
      '/webhooks/{id}/replay',
      '/webhooks/{id}/rotate-secret',
    ]);
    for (const [path, post] of posts) {
      const header = (post.parameters as Json[]).find((p) => p.in === 'header' && p.name === 'idempotency-key');
      assert.ok(header, `POST ${path} declares the header`);
      assert.equal(header.required, false);
      assert.equal(header.schema.type, 'string');
      assert.match(header.description, /IDEMPOTENCY_KEY_TTL/);
      for (const status of ['409', '422']) assert.ok(post.responses[status], `POST ${path} documents ${status}`);
      const success = Object.keys(post.responses).find((status) => status.startsWith('2'))!;
      assert.ok(post.responses[success].headers['Idempotent-Replayed'], `POST ${path} ${success} names Idempotent-Replayed`);
    }
    assert.match(doc.info.description, /## Retrying safely/);
  });

  it('every plant operation needs bearerAuth; the public ones say security: []', () => {
    for (const key of PLANT_OPERATIONS) {
      const security = op(key).security;
      assert.ok(Array.isArray(security) && security.length > 0, key);
      assert.ok(
        security.every((s: Json) => Object.keys(s).includes('bearerAuth')),
        key,
      );
      assert.ok(op(key).responses['401'], `${key} documents 401`);
    }
    for (const key of PUBLIC_OPERATIONS) assert.deepEqual(op(key).security, [], key);
  });

  it('documents the headers that go with 201, 401, 403 and 503', () => {
    assert.match(op('put /plants/{id}').responses['201'].headers.Location.description, /plant created/);
    assert.match(op('post /webhooks').responses['201'].headers.Location.description, /endpoint created/);
    assert.ok(op('get /plants').responses['401'].headers['WWW-Authenticate']);
    assert.ok(op('post /plants').responses['403'].headers['WWW-Authenticate']);
    assert.ok(op('post /plants').responses['503'].headers['Retry-After']);
  });

  it('documents the paging, the merge patch and the 201/204 answers', () => {
    const list = op('get /plants');
    const names = list.parameters.map((p: Json) => `${p.in}:${p.name}`).sort();
    // Accept is chosen by the 200's media types (OpenAPI ignores an Accept parameter; /docs has its own selector).
    assert.deepEqual(names, [
      'header:if-match',
      'header:if-none-match',
      'header:prefer',
      'query:after',
      'query:cursor',
      'query:format',
      'query:id',
      'query:limit',
      'query:q',
      'query:sort',
      'query:tag',
    ]);
    assert.deepEqual(Object.keys(list.responses['200'].content).sort(), ['application/json', 'application/x-ndjson', 'text/csv']);
    const limit = list.parameters.find((p: Json) => p.name === 'limit');
    assert.equal(limit.schema.minimum, 1);
    assert.equal(limit.schema.maximum, 1000);
    assert.equal(limit.schema.default, 100);
    assert.equal(limit.schema.format, 'int32');
    const id = op('get /plants/{id}').parameters.find((p: Json) => p.name === 'id');
    assert.equal(id.in, 'path');
    assert.equal(id.required, true);
    assert.equal(id.schema.format, 'int64');
    assert.ok(op('patch /plants/{id}').requestBody.content['application/merge-patch+json']);
    assert.ok(op('put /plants/{id}').responses['201']);
    assert.ok(op('delete /plants/{id}').responses['204']);
    assert.equal(op('delete /plants/{id}').responses['204'].content, undefined);
  });

  it('describes the three webhook events at the top level: their bodies, headers and signing', () => {
    assert.deepEqual(Object.keys(doc.webhooks).sort(), ['plant.created', 'plant.deleted', 'plant.updated']);
    for (const [event, item] of Object.entries(doc.webhooks as Record<string, Json>)) {
      const post = item.post;
      assert.match(post.description, /HMAC-SHA256/);
      assert.deepEqual(
        post.parameters.map((p: Json) => `${p.in}:${p.name}:${p.required}`),
        ['header:webhook-id:true', 'header:webhook-timestamp:true', 'header:webhook-signature:true'],
      );
      const body = resolve(doc, post.requestBody.content['application/json'].schema.$ref) as Json;
      assert.deepEqual(Object.keys(body.properties), ['type', 'timestamp', 'data'], event);
      assert.equal(body.properties.type.const, event);
      assert.ok(post.responses['2XX']);
      assert.ok(post.responses['410']);
    }
    const deleted = resolve(doc, doc.webhooks['plant.deleted'].post.requestBody.content['application/json'].schema.$ref) as Json;
    assert.deepEqual(Object.keys(deleted.properties.data.properties), ['id']);
  });

  it('documents the webhook management operations with their scope', () => {
    for (const key of [
      'post /webhooks',
      'get /webhooks',
      'get /webhooks/{id}',
      'patch /webhooks/{id}',
      'delete /webhooks/{id}',
      'post /webhooks/{id}/rotate-secret',
      'get /webhooks/{id}/deliveries',
      'post /webhooks/{id}/replay',
    ]) {
      assert.ok(op(key), key);
      assert.deepEqual(op(key).security, [{ bearerAuth: ['webhooks:manage'] }], key);
    }
    assert.ok(op('post /webhooks').responses['201'].headers.Location);
    assert.ok(op('post /webhooks/{id}/replay').responses['202']);
  });
  it('says which int64 values may come as strings: each int64 schema names its string form, Prefer is declared where answers hold one', () => {
    const int64s: Json[] = [];
    const walk = (node: Json): void => {
      if (node === null || typeof node !== 'object') return;
      if (node.type === 'integer' && node.format === 'int64') int64s.push(node);
      for (const value of Object.values(node)) walk(value);
    };
    walk(doc.components.schemas);
    walk(doc.webhooks);
    assert.ok(int64s.length > 5);
    for (const node of int64s) assert.deepEqual(node['x-int64-string'], { type: 'string', pattern: '^(0|-?[1-9][0-9]{0,18})$' });
    for (const key of ['get /plants/{id}', 'get /plants', 'put /plants/{id}', 'get /events', 'get /webhooks/{id}/deliveries']) {
      const prefer = (op(key).parameters as Json[]).find((p) => p.in === 'header' && p.name === 'prefer');
      assert.match(prefer?.description ?? '', /int64=string/, key);
      assert.ok(op(key).responses['200'].headers['Preference-Applied'], key);
    }
    assert.equal(JSON.stringify(op('get /tokens').parameters).includes('int64=string'), false, 'no int64 in a token');
  });
  it('declares the headers the pipeline sets whatever the status on every answer of the operations that get them, from the components', () => {
    const ref = (key: string, status: string, header: string) => op(key).responses[status]?.headers?.[header]?.$ref as string | undefined;
    for (const key of Object.keys(doc.paths).flatMap((path) => Object.keys(doc.paths[path]).map((method) => `${method} ${path}`))) {
      const probe = ['get /healthz', 'get /readyz'].includes(key);
      for (const status of Object.keys(op(key).responses).filter((s) => !['408', '414', '431'].includes(s))) {
        assert.equal(ref(key, status, 'RateLimit') !== undefined, !probe, `${key} ${status} RateLimit`);
        assert.equal(ref(key, status, 'RateLimit-Policy') !== undefined, !probe, `${key} ${status} RateLimit-Policy`);
        if (key.startsWith('post '))
          assert.equal(ref(key, status, 'Idempotent-Replayed'), '#/components/headers/Idempotent-Replayed', `${key} ${status}`);
      }
    }
    for (const status of ['200', '304', '400', '401', '412', '429', 'default']) {
      for (const header of ['Deprecation', 'Sunset', 'Link', 'Warning'])
        assert.ok(op('get /tokens').responses[status].headers[header], `get /tokens ${status} ${header}`);
    }
    for (const status of ['400', '404', '412', '413', 'default']) {
      for (const header of ['Warning', 'Preference-Applied'])
        assert.ok(op('patch /plants/{id}').responses[status].headers[header], `patch ${status} ${header}`);
    }
    assert.deepEqual(op('get /plants').responses['414'], { $ref: '#/components/responses/UriTooLong' });
  });
});
