import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import type { JWTPayload } from 'jose';
import { testApp } from '../helpers.js';
import { AUDIENCE, ISSUER, JwksServer, mint, signingKey } from './identity-provider.js';

/**
 * A JWT whose subject or client is as long as a header allows. Its principal's id keys the rate limit and
 * the Idempotency-Key answers, which PostgreSQL keeps in B-tree indexes of 2704 bytes an entry at most:
 * a long claim is its SHA-256 in the id, a short one stays as earlier releases kept it. This file runs on
 * PostgreSQL too (test/store/postgres/http.process.test.ts).
 */

const IN_ID = 'jwt:https%3A//id.example/';
/** About 4,000 characters of random base64url, over any B-tree entry, well under a header's limit. */
const longName = () => randomBytes(3000).toString('base64url');

describe('a JWT with a claim longer than an index entry', async () => {
  const key = await signingKey('key-a');
  const jwks = await JwksServer.start(after, [key]);
  const t = await testApp(after, { config: { jwtJwksUrl: jwks.url, jwtIssuer: ISSUER, jwtAudience: AUDIENCE, rateLimitPerMinute: 1000 } });
  const token = (claims: JWTPayload) => mint(key, { sub: undefined, scope: 'plants:read plants:write', ...claims });
  const idOf = async (claims: JWTPayload) => (await t.call('GET', '/token', { token: await token(claims) })).json<{ id: string }>().id;

  it('is served, rate-limited and answered from its Idempotency-Key, not 500', async () => {
    for (const [n, claims] of [{ sub: longName() }, { client_id: longName() }].entries()) {
      const bearer = await token(claims);
      const read = await t.call('GET', '/plants', { token: bearer });
      assert.equal(read.statusCode, 200, read.payload);
      assert.equal(read.headers['ratelimit-remaining'] === undefined, false, 'counted against the rate limit');
      const post = () => t.call('POST', '/plants', { token: bearer, body: { id: 10 + n, name: 'Fern' }, headers: { 'idempotency-key': 'k-1' } });
      const first = await post();
      assert.equal(first.statusCode, 200, first.payload);
      const retried = await post();
      assert.equal(retried.statusCode, 200, retried.payload);
      assert.equal(retried.headers['idempotent-replayed'], 'true');
    }
  });

  it("is named by the claim's SHA-256, the same for every token of the subject; a shorter claim stays whole", async () => {
    const sub = longName();
    const id = await idOf({ sub });
    assert.match(id, /^jwt:https%3A\/\/id\.example\/:sub:sha256:[\w-]{43}$/);
    assert.equal(await idOf({ sub, jti: 'another' }), id, 'stable across renewals');
    assert.notEqual(await idOf({ sub: longName() }), id);
    assert.match(await idOf({ client_id: sub }), /^jwt:https%3A\/\/id\.example\/:client:sha256:[\w-]{43}$/);
    const kept = 'u'.repeat(1024);
    assert.equal(await idOf({ sub: kept }), `${IN_ID}:sub:${kept}`);
    // A subject that spells the digest's form is escaped as any other: it never meets a long one's id.
    assert.equal(await idOf({ sub: id.slice(`${IN_ID}:sub:`.length) }), `${IN_ID}:sub:sha256%3A${id.slice(-43)}`);
  });
});
