import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { createToken, hashToken } from '../../src/auth/tokens.js';
import { nextLink } from '../toolkit.js';
import { assertError, openTestStore, testApp } from '../helpers.js';
import { AUDIENCE, ISSUER, mint } from '../auth/identity-provider.js';

/**
 * GET /tokens and GET /tokens/{id}: the stored tokens, never a secret or a hash; static tokens and JWTs
 * are not stored, not listed, and the answer says which of them the service accepts. Runs on PostgreSQL
 * too (test/store/postgres/http.process.test.ts).
 */

interface Shown {
  id: string;
  name: string;
  scopes: string[];
  createdAt: string;
  revokedAt: string | null;
}

const FIELDS = ['createdAt', 'id', 'name', 'revokedAt', 'scopes'];

describe('GET /tokens', async () => {
  const t = await testApp(after);
  const made: Array<{ id: string; secret: string }> = [];
  for (const [name, scopes] of [
    ['alpha', ['plants:read']],
    ['beta', ['plants:write', 'plants:read']],
    ['gamma', ['events:read']],
    ['delta', ['tokens:manage', 'webhooks:manage']],
    ['epsilon', ['plants:read']],
  ] as const) {
    const res = await t.call('POST', '/tokens', { body: { name, scopes } });
    assert.equal(res.statusCode, 201, res.payload);
    made.push(res.json());
  }
  assert.equal((await t.call('DELETE', `/tokens/${made[2]!.id}`)).statusCode, 204);

  it('lists every stored token, active and revoked, oldest first, as the store keeps them, never a secret or hash', async () => {
    const res = await t.call('GET', '/tokens');
    assert.equal(res.statusCode, 200);
    const listed = res.json<Shown[]>();
    assert.deepEqual(
      listed.map((token) => token.id),
      made.map((token) => token.id),
    );
    for (const token of listed) assert.deepEqual(Object.keys(token).sort(), FIELDS);
    assert.deepEqual(
      listed.map((token) => token.revokedAt === null),
      [true, true, false, true, true],
    );
    assert.deepEqual(listed[1]!.scopes, ['plants:write', 'plants:read']);
    const records = await t.store.tokens.list();
    assert.deepEqual(listed, records);
    // Nothing of a secret or a hash in the text: not the secret, not its hash in hex or base64.
    for (const { secret } of made) {
      const hash = hashToken(secret);
      for (const form of [secret, secret.slice(3), hash.toString('hex'), hash.toString('base64'), hash.toString('base64url')]) {
        assert.ok(!res.payload.includes(form), 'no secret or hash in the list');
      }
    }
    assert.doesNotMatch(res.payload, /"(secret|hash)"/);
  });

  it('pages with limit and a cursor (after, its alias), Link rel="next" while more remain, keeping the other parameters', async () => {
    const first = await t.call('GET', '/tokens?limit=2');
    assert.deepEqual(
      first.json<Shown[]>().map((token) => token.name),
      ['alpha', 'beta'],
    );
    const link = nextLink(first.headers.link)!;
    assert.match(link, /^\/tokens\?limit=2&cursor=[A-Za-z0-9_-]+$/);
    assert.deepEqual((await t.call('GET', link)).json(), (await t.call('GET', `/tokens?limit=2&after=${made[1]!.id}`)).json(), 'after: the alias');
    const second = await t.call('GET', link);
    assert.deepEqual(
      second.json<Shown[]>().map((token) => token.name),
      ['gamma', 'delta'],
    );
    const third = await t.call('GET', `/tokens?limit=2&after=${made[3]!.id}`);
    assert.deepEqual(
      third.json<Shown[]>().map((token) => token.name),
      ['epsilon'],
    );
    assert.equal(third.headers.link, undefined, 'the last page has no next');
    const exact = await t.call('GET', '/tokens?limit=5');
    assert.equal(exact.json<Shown[]>().length, 5);
    assert.equal(exact.headers.link, undefined, 'no next page when exactly limit remain');
    assert.deepEqual((await t.call('GET', `/tokens?after=${made[4]!.id}`)).json(), []);
  });

  it('filters by status: active or revoked, and pages within it', async () => {
    const active = await t.call('GET', '/tokens?status=active&limit=2');
    assert.deepEqual(
      active.json<Shown[]>().map((token) => token.name),
      ['alpha', 'beta'],
    );
    const next = nextLink(active.headers.link)!;
    assert.match(next, /^\/tokens\?status=active&limit=2&cursor=/);
    assertError(await t.call('GET', next.replace('status=active', 'status=revoked')), 400, 'querystring.cursor');
    assert.deepEqual(
      (await t.call('GET', next)).json<Shown[]>().map((token) => token.name),
      ['delta', 'epsilon'],
    );
    // The filter's earlier name is still taken: the same page, its next page, and the Link to the deprecation's documentation.
    const old = await t.call('GET', '/tokens?state=active&limit=2');
    assert.equal(old.payload, active.payload);
    assert.equal(old.headers.deprecation, '@1796083200');
    assert.equal(old.headers.sunset, 'Wed, 01 Dec 2027 00:00:00 GMT');
    assert.match(
      String(old.headers.link),
      /^<\/tokens\?state=active&limit=2&cursor=[\w-]+>; rel="next", <docs#\/tokens\/listTokens>; rel="deprecation"; type="text\/html"$/,
    );
    // Its cursor is the one status=active gives (the same list), and the next page follows it.
    const oldNext = /^<([^>]+)>/.exec(String(old.headers.link))![1]!;
    assert.equal(new URL(oldNext, 'http://x').searchParams.get('cursor'), new URL(next, 'http://x').searchParams.get('cursor'));
    assert.deepEqual(
      (await t.call('GET', oldNext)).json<Shown[]>().map((token) => token.name),
      ['delta', 'epsilon'],
    );
    const revoked = (await t.call('GET', '/tokens?status=revoked')).json<Shown[]>();
    assert.deepEqual(
      revoked.map((token) => token.name),
      ['gamma'],
    );
    assert.match(revoked[0]!.revokedAt!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('refuses bad parameters with 400 naming them', async () => {
    assertError(await t.call('GET', '/tokens?limit=0'), 400, 'querystring.limit must be at least 1');
    assertError(await t.call('GET', '/tokens?limit=1001'), 400, 'querystring.limit must be at most 1000');
    assertError(await t.call('GET', '/tokens?limit=ten'), 400, 'querystring.limit');
    assertError(await t.call('GET', '/tokens?status=lost'), 400, 'querystring.status must be one of active, revoked');
    assertError(await t.call('GET', '/tokens?state=lost'), 400, 'querystring.state must be one of active, revoked');
    assertError(await t.call('GET', '/tokens?after=nobody'), 400, 'querystring.after names no token');
    assertError(await t.call('GET', '/tokens?name=alpha'), 400, 'unknown query parameter "name"');
  });

  it('says in its answer that static tokens and JWTs are accepted but not listed (Unlisted-Token-Sources)', async () => {
    // The test app has a static token.
    assert.equal((await t.call('GET', '/tokens')).headers['unlisted-token-sources'], 'static');
    const static_ = (await t.call('GET', '/token')).json<{ id: string }>().id;
    assert.ok(!(await t.call('GET', '/tokens')).json<Shown[]>().some((token) => token.id === static_), 'the static token is not listed');
  });

  it('reads one token by id, active or revoked, never its secret; 404 for another id, in words for static and JWT ids', async () => {
    const res = await t.call('GET', `/tokens/${made[2]!.id}`);
    assert.equal(res.statusCode, 200);
    const token = res.json<Shown>();
    assert.deepEqual(Object.keys(token).sort(), FIELDS);
    assert.equal(token.name, 'gamma');
    assert.notEqual(token.revokedAt, null);
    assertError(await t.call('GET', '/tokens/0123456789ab'), 404, 'no token with id 0123456789ab');
    // A name is not an id: an id of no token id's form is refused, naming the parameter.
    assertError(await t.call('GET', '/tokens/alpha'), 400, 'params.id must be a token id', 'invalid_id');
    assertError(await t.call('GET', '/tokens/static:0a1b2c3d4e5f'), 404, 'a static token (PLANT_STORE_TOKENS) is configuration, not managed here');
    assertError(await t.call('GET', '/tokens/jwt:https%3A%2F%2Fid.example%2F:alice'), 404, 'managed by its identity provider');
    assertError(await t.call('GET', '/tokens/%00'), 400, 'params.id');
  });

  it('needs tokens:manage: 401 without a token, 403 without the scope (a plants and webhooks token included)', async () => {
    for (const url of ['/tokens', `/tokens/${made[0]!.id}`]) {
      assertError(await t.call('GET', url, { token: null }), 401, 'missing bearer token');
      const other = await t.tokenWith('plants:read', 'plants:write', 'webhooks:manage', 'events:read');
      assertError(await t.call('GET', url, { token: other }), 403, 'this token lacks the scope tokens:manage');
    }
  });

  it('a token with tokens:manage alone may list them', async () => {
    const manager = await t.tokenWith('tokens:manage');
    const res = await t.call('GET', '/tokens', { token: manager });
    assert.equal(res.statusCode, 200);
    assert.ok(res.json<Shown[]>().length >= made.length);
  });
});

describe('GET /tokens beside other kinds of tokens', () => {
  const JWT_SECRET = 'a shared secret of at least 32 bytes for the token tests';

  it('names jwt when a JWT key is configured, and a JWT with tokens:manage lists and makes stored tokens', async () => {
    const t = await testApp(after, { config: { jwtSecret: JWT_SECRET, jwtIssuer: ISSUER, jwtAudience: AUDIENCE } });
    await createToken(t.store.tokens, 'stored', ['plants:read']);
    const jwt = await mint({ privateKey: new TextEncoder().encode(JWT_SECRET), alg: 'HS256' }, { sub: 'alice', scope: 'tokens:manage plants:read' });
    const res = await t.call('GET', '/tokens', { token: jwt });
    assert.equal(res.statusCode, 200, res.payload);
    assert.equal(res.headers['unlisted-token-sources'], 'static, jwt');
    assert.deepEqual(
      res.json<Shown[]>().map((token) => token.name),
      ['stored'],
    );
    // The JWT grants within its own scopes, as any token.
    const made = await t.call('POST', '/tokens', { token: jwt, body: { name: 'from-jwt', scopes: ['plants:read'] } });
    assert.equal(made.statusCode, 201, made.payload);
    assertError(await t.call('POST', '/tokens', { token: jwt, body: { name: 'no', scopes: ['plants:write'] } }), 403, 'plants:write');
    // Its own id is no stored token's: nothing to revoke, no self-revocation guard to meet.
    const own = (await t.call('GET', '/token', { token: jwt })).json<{ id: string }>().id;
    assertError(await t.call('DELETE', `/tokens/${encodeURIComponent(own)}`, { token: jwt }), 404, 'managed by its identity provider');
  });

  it('has no Unlisted-Token-Sources header when only stored tokens are accepted', async () => {
    const store = await openTestStore(after);
    const app = await buildApp({ config: { tokens: [], bodyLimit: 64 * 1024, overloadEventLoopDelayMs: 0 }, store });
    after(async () => {
      await app.close();
      await store.close();
    });
    const { secret } = await createToken(store.tokens, 'admin', ['tokens:manage']);
    const res = await app.inject({ method: 'GET', url: '/tokens', headers: { authorization: `Bearer ${secret}` } });
    assert.equal(res.statusCode, 200, res.payload);
    assert.equal(res.headers['unlisted-token-sources'], undefined);
    assert.deepEqual(
      res.json<Shown[]>().map((token) => token.name),
      ['admin'],
    );
  });
});
