import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createToken } from '../../src/auth/tokens.js';
import { REVOKED } from '../../src/events/credentials.js';
import { assertError, testApp, type TestApp } from '../helpers.js';
import { listen, rawStream } from '../events/sse.js';
import { until } from '../toolkit.js';

/**
 * DELETE /tokens/{id}: revokes a stored token, which every instance then refuses within a second and
 * whose open event streams end; a token revokes itself only with self=true. Runs on PostgreSQL too
 * (test/store/postgres/http.process.test.ts).
 */

interface Made {
  id: string;
  secret: string;
}

async function make(t: TestApp, name: string, scopes: string[], token?: string): Promise<Made> {
  const res = await t.call('POST', '/tokens', { body: { name, scopes }, ...(token === undefined ? {} : { token }) });
  assert.equal(res.statusCode, 201, res.payload);
  return res.json<Made>();
}

describe('DELETE /tokens/{id}', async () => {
  const t = await testApp(after);

  it('revokes: 204, the token is refused (401) by this instance from its next request, and it stays listed, revoked', async () => {
    const { id, secret } = await make(t, 'leaving', ['plants:read']);
    // Found valid, and so trusted for TOKEN_CACHE_MS without asking the store: the revocation forgets it.
    assert.equal((await t.call('GET', '/plants', { token: secret })).statusCode, 200);
    assert.equal((await t.call('GET', '/plants', { token: secret })).statusCode, 200);
    const res = await t.call('DELETE', `/tokens/${id}`);
    assert.equal(res.statusCode, 204);
    assert.equal(res.payload, '');
    assertError(await t.call('GET', '/plants', { token: secret }), 401, 'unknown or revoked bearer token');
    const shown = (await t.call('GET', `/tokens/${id}`)).json<{ revokedAt: string | null }>();
    assert.match(shown.revokedAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('answers 404 for an unknown id and for a token revoked already, saying which; nothing changes', async () => {
    assertError(await t.call('DELETE', '/tokens/0123456789ab'), 404, 'no token with id 0123456789ab');
    const { id } = await make(t, 'twice', ['plants:read']);
    assert.equal((await t.call('DELETE', `/tokens/${id}`)).statusCode, 204);
    const { revokedAt } = (await t.call('GET', `/tokens/${id}`)).json<{ revokedAt: string }>();
    assertError(await t.call('DELETE', `/tokens/${id}`), 404, `token ${id} is revoked already (since ${revokedAt})`);
    assert.equal((await t.call('GET', `/tokens/${id}`)).json<{ revokedAt: string }>().revokedAt, revokedAt, 'the first revocation time is kept');
    assertError(await t.call('DELETE', '/tokens/static:0a1b2c3d4e5f'), 404, 'a static token (PLANT_STORE_TOKENS) is configuration');
  });

  it('revokes by id only: a token whose name is that id is left alone', async () => {
    const target = await make(t, 'target', ['plants:read']);
    // Another token named after the target's id (the CLI's `token revoke` takes ids and names alike).
    const namesake = await make(t, target.id, ['plants:read']);
    assertError(await t.call('DELETE', '/tokens/target'), 400, 'params.id must be a token id', 'invalid_id');
    assert.equal((await t.call('DELETE', `/tokens/${target.id}`)).statusCode, 204);
    const byId = new Map((await t.store.tokens.list()).map((token) => [token.id, token]));
    assert.notEqual(byId.get(target.id)?.revokedAt, null);
    assert.equal(byId.get(namesake.id)?.revokedAt, null, 'the namesake is active still');
  });

  it('a token revokes itself only with self=true: 409 otherwise, and it keeps working', async () => {
    const own = await make(t, 'myself', ['tokens:manage']);
    const res = await t.call('DELETE', `/tokens/${own.id}`, { token: own.secret });
    assertError(res, 409, `token ${own.id} is the token of this request: send DELETE /tokens/${own.id}?self=true`);
    assertError(await t.call('DELETE', `/tokens/${own.id}?self=false`, { token: own.secret }), 409, 'self=true');
    assertError(await t.call('DELETE', `/tokens/${own.id}?self=maybe`, { token: own.secret }), 400, 'querystring.self');
    assertError(await t.call('DELETE', `/tokens/${own.id}?confirm=true`, { token: own.secret }), 400, 'unknown query parameter "confirm"');
    assert.equal((await t.store.tokens.get(own.id))?.revokedAt, null, 'nothing changed');
    assert.equal((await t.call('GET', '/tokens', { token: own.secret })).statusCode, 200, 'it still works');
    // Another token is revoked without it, and self=true there changes nothing.
    const other = await make(t, 'other-one', ['plants:read']);
    assert.equal((await t.call('DELETE', `/tokens/${other.id}?self=true`, { token: own.secret })).statusCode, 204);
    // Said so, it goes, and this instance refuses it from its next request.
    assert.equal((await t.call('DELETE', `/tokens/${own.id}?self=true`, { token: own.secret })).statusCode, 204);
    assertError(await t.call('GET', '/tokens', { token: own.secret }), 401, 'unknown or revoked bearer token');
  });

  it('a token with tokens:manage alone may revoke a token with more scopes than its own', async () => {
    // Revoking takes power away; it grants nothing, so the scopes do not have to be held.
    const manager = await make(t, 'manager', ['tokens:manage']);
    const broad = await make(t, 'broad', ['plants:read', 'plants:write', 'webhooks:manage']);
    assert.equal((await t.call('DELETE', `/tokens/${broad.id}`, { token: manager.secret })).statusCode, 204);
  });

  it('needs tokens:manage: 401 without a token, 403 without the scope, nothing revoked', async () => {
    const { id } = await make(t, 'kept', ['plants:read']);
    assertError(await t.call('DELETE', `/tokens/${id}`, { token: null }), 401, 'missing bearer token');
    const writer = await t.tokenWith('plants:read', 'plants:write', 'webhooks:manage', 'events:read');
    assertError(await t.call('DELETE', `/tokens/${id}`, { token: writer }), 403, 'this token lacks the scope tokens:manage');
    assert.equal((await t.store.tokens.get(id))?.revokedAt, null);
  });

  it('ends the open event streams of the token revoked, saying why, and leaves the others open', { timeout: 60_000 }, async () => {
    const app = await testApp(after);
    const origin = await listen(app.app);
    const { id, secret } = await make(app, 'browser', ['events:read']);
    const { secret: other } = await createToken(app.store.tokens, 'other-browser', ['events:read']);
    const inHeader = await rawStream(`${origin}/events`, { authorization: `Bearer ${secret}` });
    const inUrl = await rawStream(`${origin}/events?access_token=${secret}`, {});
    const untouched = await rawStream(`${origin}/events`, { authorization: `Bearer ${other}` });
    for (const stream of [inHeader, inUrl, untouched]) assert.equal(stream.status, 200);
    assert.equal((await app.call('DELETE', `/tokens/${id}`)).statusCode, 204);
    // Before streams were checked again they never ended: the test's time-out fails it instead of hanging.
    assert.equal(await inHeader.ended, true);
    assert.equal(await inUrl.ended, true);
    for (const stream of [inHeader, inUrl]) assert.ok(stream.text().endsWith(`: ${REVOKED}\n\n`), stream.text());
    assert.equal((await app.call('POST', '/plants', { body: { id: 1, name: 'after' } })).statusCode, 200);
    await until(() => untouched.text().includes('event: plant.created'), 'the event on the stream of the other token');
    untouched.abort();
  });
});
