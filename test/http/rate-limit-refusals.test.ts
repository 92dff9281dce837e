import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { assertError, testApp, TOKEN } from '../helpers.js';
import { AUDIENCE, ISSUER, JwksServer, mint, signingKey } from '../auth/identity-provider.js';
import { until } from '../toolkit.js';

/**
 * Every request answered counts against the rate limit, refusals included: against its token once the
 * token is found valid (a 403 for a scope it lacks, for a full-scope token in the URL), else against its
 * client address (a token sent twice, the identity provider's keys out of reach, no such route). Runs on
 * PostgreSQL too (test/store/postgres/http.process.test.ts), where the counts are the store's
 * (SharedRateLimiter).
 */

const LIMIT = 3;

/** Starts on a minute's first 50 s, so that a fixed one-minute window cannot turn mid-test. */
async function awayFromWindowEdge(): Promise<void> {
  await until(() => Date.now() % 60_000 < 50_000, 'the rate-limit window to be far from its end', { timeoutMs: 20_000, everyMs: 200 });
}

/** LIMIT answers of `status`, each with the RateLimit headers counting down, then 429 naming `who`. */
async function refusedThenLimited(send: () => Promise<LightMyRequestResponse>, status: number, who: 'token' | 'address'): Promise<void> {
  for (let i = 0; i < LIMIT; i++) {
    const res = await send();
    assert.equal(res.statusCode, status, res.payload);
    assert.equal(res.headers['ratelimit-limit'], String(LIMIT));
    assert.equal(res.headers['ratelimit-remaining'], String(LIMIT - 1 - i));
  }
  const limited = await send();
  assertError(limited, 429, `too many requests from this ${who}`);
  assert.ok(Number(limited.headers['retry-after']) >= 1);
}

describe('refusals count against the rate limit', () => {
  it('a token refused for a scope it lacks (403) counts against that token, and its other requests are then refused too', async () => {
    const t = await testApp(after, { config: { rateLimitPerMinute: LIMIT } });
    const reader = await t.tokenWith('events:read');
    await awayFromWindowEdge();
    await refusedThenLimited(() => t.call('GET', '/plants', { token: reader }), 403, 'token');
    assertError(await t.call('GET', '/events', { token: reader }), 429, 'this token');
    assert.equal((await t.call('GET', '/plants')).statusCode, 200, 'another token has its own budget');
  });

  it('a full-scope token sent in the URL (403) counts against that token', async () => {
    const t = await testApp(after, { config: { rateLimitPerMinute: LIMIT } });
    await awayFromWindowEdge();
    await refusedThenLimited(() => t.call('GET', `/events?access_token=${TOKEN}`, { token: null }), 403, 'token');
    assertError(await t.call('GET', '/plants'), 429, 'this token');
  });

  it('a token sent twice (400) counts against the client address, which a valid token does not share', async () => {
    const t = await testApp(after, { config: { rateLimitPerMinute: LIMIT } });
    const reader = await t.tokenWith('events:read');
    await awayFromWindowEdge();
    const twice = (remoteAddress: string) =>
      t.app.inject({ method: 'GET', url: `/events?access_token=${reader}`, remoteAddress, headers: { authorization: `Bearer ${reader}` } });
    await refusedThenLimited(() => twice('10.1.0.1'), 400, 'address');
    assertError(await t.app.inject({ method: 'GET', url: '/openapi.json', remoteAddress: '10.1.0.1' }), 429, 'address');
    assert.equal((await twice('10.1.0.2')).statusCode, 400, 'another address has its own count');
    const valid = await t.app.inject({ method: 'GET', url: '/events', remoteAddress: '10.1.0.1', headers: { authorization: `Bearer ${reader}` } });
    assert.equal(valid.statusCode, 200, 'the token is counted apart from the address');
  });

  it('a request to no route (404, 405) counts against the client address', async () => {
    const t = await testApp(after, { config: { rateLimitPerMinute: LIMIT } });
    await awayFromWindowEdge();
    let n = 0;
    await refusedThenLimited(() => t.app.inject({ method: 'GET', url: `/nothing-${n++}`, remoteAddress: '10.2.0.1' }), 404, 'address');
    assertError(await t.app.inject({ method: 'DELETE', url: '/plants', remoteAddress: '10.2.0.1' }), 429, 'address');
    assert.equal((await t.app.inject({ method: 'DELETE', url: '/plants', remoteAddress: '10.2.0.2' })).statusCode, 405);
  });

  it("a JWT answered 503 (the identity provider's keys out of reach) counts against the client address", async () => {
    const key = await signingKey('key-a');
    const gone = await JwksServer.start(after);
    const url = gone.url;
    await gone.stop();
    const t = await testApp(after, { config: { rateLimitPerMinute: LIMIT, jwtJwksUrl: url, jwtIssuer: ISSUER, jwtAudience: AUDIENCE } });
    const jwt = await mint(key, { scope: 'plants:read' });
    await awayFromWindowEdge();
    const send = () => t.app.inject({ method: 'GET', url: '/plants', remoteAddress: '10.3.0.1', headers: { authorization: `Bearer ${jwt}` } });
    await refusedThenLimited(send, 503, 'address');
    assert.equal((await t.call('GET', '/plants')).statusCode, 200, "the service's own tokens are not held back");
  });

  it('an allowed request is counted once', async () => {
    const t = await testApp(after, { config: { rateLimitPerMinute: LIMIT } });
    await awayFromWindowEdge();
    await refusedThenLimited(() => t.call('GET', '/plants'), 200, 'token');
  });
});
