import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createToken } from '../../src/auth/tokens.js';
import { SCOPES, type Scope } from '../../src/model/scopes.js';
import { assertError, testApp } from '../helpers.js';
import { until } from '../toolkit.js';

describe('GET /token: what the bearer token of the request is and may do', async () => {
  const t = await testApp(after);

  it('answers a static token (PLANT_STORE_TOKENS) with every scope', async () => {
    const res = await t.call('GET', '/token');
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json\b/);
    const { id, scopes } = res.json<{ id: string; scopes: Scope[] }>();
    // A static token's id is its own (keys and rate limits are per token), telling nothing of its secret.
    assert.match(id, /^static:[0-9a-f]{12}$/);
    assert.deepEqual(scopes, [...SCOPES]);
  });

  it('answers a stored token with its own id and only its scopes, whichever they are (no scope is needed to ask)', async () => {
    const sets: Scope[][] = [...SCOPES.map((scope) => [scope]), ['plants:read', 'events:read']];
    for (const scopes of sets) {
      const { secret, record } = await createToken(t.store.tokens, `asker-${scopes.join('-')}`, scopes);
      const res = await t.call('GET', '/token', { token: secret });
      assert.equal(res.statusCode, 200, res.payload);
      assert.deepEqual(res.json(), { id: record.id, scopes });
    }
  });

  it('refuses a request without a token, with a wrong one and with a revoked one, in words (401)', async () => {
    assertError(await t.call('GET', '/token', { token: null }), 401, 'missing bearer token');
    assertError(await t.call('GET', '/token', { token: 'ps_not-a-token-at-all-0123456789abcdef' }), 401, 'unknown or revoked bearer token');
    const { secret, record } = await createToken(t.store.tokens, 'revoked-asker', ['plants:read']);
    assert.equal((await t.call('GET', '/token', { token: secret })).statusCode, 200);
    assert.equal(await t.store.tokens.revoke(record.id), true);
    // The verifier trusts a valid token for at most TOKEN_CACHE_MS: poll, no timed assertion.
    const res = await until(async () => {
      const answer = await t.call('GET', '/token', { token: secret });
      return answer.statusCode !== 200 && answer;
    }, 'the revoked token to be refused');
    assertError(res, 401, 'unknown or revoked bearer token');
  });

  it('takes no query parameter', async () => {
    assertError(await t.call('GET', '/token?scope=plants:read'), 400, 'unknown query parameter "scope"');
  });

  it('is documented as needing a bearer token with any scopes, answering TokenInfo', async () => {
    const doc = (await t.call('GET', '/openapi.json', { token: null })).json();
    const op = doc.paths['/token'].get;
    assert.deepEqual(op.security, [{ bearerAuth: [] }]);
    assert.equal(op.responses['403'], undefined, 'no scope to lack');
    assert.deepEqual(op.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/TokenInfo' });
    assert.deepEqual(doc.components.schemas.TokenInfo.properties.scopes.items.enum, [...SCOPES]);
  });
});
