import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { JWTPayload } from 'jose';
import { assertError, testApp } from '../helpers.js';
import { listen, rawStream } from '../events/sse.js';
import { AUDIENCE, ISSUER, JwksServer, mint, signingKey } from './identity-provider.js';

/**
 * Whom a JWT speaks for (its principal's id): a user (`sub`), a client (`client_id`, else `azp`) or, with
 * neither, the token itself, kept apart, so that a client named "svc" is never the user "svc". Everything
 * kept per principal follows: Idempotency-Key answers (in the store: this file runs on PostgreSQL too,
 * test/store/postgres/http.process.test.ts), rate limits and stream caps.
 */

const JWT_SETTINGS = { jwtIssuer: ISSUER, jwtAudience: AUDIENCE };
/** ISSUER as it stands in an id: `:` and `%` escaped. */
const IN_ID = 'jwt:https%3A//id.example/';

describe("a JWT's principal", async () => {
  const key = await signingKey('key-a');
  const jwks = await JwksServer.start(after, [key]);
  /** A token for `claims` (without the default sub unless given), with every plant and event scope. */
  const token = (claims: JWTPayload) => mint(key, { sub: undefined, scope: 'plants:read plants:write events:read', ...claims });

  it('is the subject, the client or the token, each of its own kind, with : and % escaped so that no claim spells another id', async () => {
    const t = await testApp(after, { config: { jwtJwksUrl: jwks.url, ...JWT_SETTINGS } });
    const idOf = async (claims: JWTPayload) => (await t.call('GET', '/token', { token: await token(claims) })).json<{ id: string }>().id;
    assert.equal(await idOf({ sub: 'svc' }), `${IN_ID}:sub:svc`);
    assert.equal(await idOf({ client_id: 'svc' }), `${IN_ID}:client:svc`);
    assert.equal(await idOf({ azp: 'svc' }), `${IN_ID}:client:svc`, 'azp names the client too');
    assert.equal(await idOf({ sub: 'alice', client_id: 'svc', azp: 'svc' }), `${IN_ID}:sub:alice`, 'a user, whatever client it came through');
    assert.equal(await idOf({ sub: '', client_id: 'svc' }), `${IN_ID}:client:svc`, 'an empty subject is none');
    assert.equal(await idOf({ sub: 'svc:client:x', client_id: 'x' }), `${IN_ID}:sub:svc%3Aclient%3Ax`);
    assert.equal(await idOf({ client_id: '100%3A' }), `${IN_ID}:client:100%253A`);
    const anonymous = await idOf({ jti: 'a' });
    assert.match(anonymous, new RegExp(`^${IN_ID}:token:[\\w-]{16}$`));
    assert.notEqual(await idOf({ jti: 'b' }), anonymous, 'without subject or client, each token is its own');
    // The ids a user, a client or a crafted name can have are all different.
    const ids = await Promise.all(
      [{ sub: 'svc' }, { client_id: 'svc' }, { sub: 'client:svc' }, { sub: 'svc:' }, { client_id: 'sub:svc' }, { sub: 'svc%3A' }].map(idOf),
    );
    assert.equal(new Set(ids).size, ids.length, ids.join(' '));
  });

  it("keeps a client's Idempotency-Key answers apart from a user's of the same name", async () => {
    const t = await testApp(after, { config: { jwtJwksUrl: jwks.url, ...JWT_SETTINGS } });
    const [user, client] = [await token({ sub: 'svc' }), await token({ client_id: 'svc' })];
    const post = (bearer: string, name: string) =>
      t.call('POST', '/plants', { token: bearer, body: { id: 1, name }, headers: { 'idempotency-key': 'k-1' } });
    const first = await post(user, 'Fern');
    assert.equal(first.statusCode, 200, first.payload);
    assert.equal((await post(user, 'Fern')).headers['idempotent-replayed'], 'true', "the user's retry is answered from the key");
    const theClients = await post(client, 'Moss');
    assert.equal(theClients.statusCode, 200, `the client's own key, not the user's (422): ${theClients.payload}`);
    assert.equal(theClients.headers['idempotent-replayed'], undefined);
    assert.equal(theClients.payload, '{"name":"Moss"}');
    assert.equal((await t.call('GET', '/plants/1', { token: user })).json<{ name: string }>().name, 'Moss', 'the write was done');
    const retried = await post(client, 'Moss');
    assert.equal(retried.headers['idempotent-replayed'], 'true');
    assert.equal(retried.payload, '{"name":"Moss"}');
  });

  it("counts a client's rate limit apart from a user's of the same name", async () => {
    const t = await testApp(after, { config: { jwtJwksUrl: jwks.url, ...JWT_SETTINGS, rateLimitPerMinute: 2 } });
    const [user, client] = [await token({ sub: 'svc' }), await token({ client_id: 'svc' })];
    for (let i = 0; i < 2; i++) assert.equal((await t.call('GET', '/plants', { token: user })).statusCode, 200);
    assertError(await t.call('GET', '/plants', { token: user }), 429, 'this token');
    const theClients = await t.call('GET', '/plants', { token: client });
    assert.equal(theClients.statusCode, 200, theClients.payload);
    assert.equal(theClients.headers['ratelimit-remaining'], '1');
  });

  it("holds a client's event streams apart from a user's of the same name", async () => {
    const t = await testApp(after, {
      config: { jwtJwksUrl: jwks.url, ...JWT_SETTINGS, eventsMaxStreams: 10, eventsMaxStreamsPerToken: 1, eventsMaxStreamsPerAddress: 10 },
    });
    const origin = await listen(t.app);
    const [user, client] = [await token({ sub: 'svc' }), await token({ client_id: 'svc' })];
    const open = (bearer: string) => rawStream(`${origin}/events`, { authorization: `Bearer ${bearer}` });
    const held = await open(user);
    assert.equal(held.status, 200);
    const second = await open(user);
    assert.equal(second.status, 429, "the user's one stream is taken");
    await second.ended;
    const theClients = await open(client);
    assert.equal(theClients.status, 200, "the client's stream is its own");
    held.abort();
    theClients.abort();
  });
});
