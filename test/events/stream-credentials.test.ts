import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { JWT_LEEWAY_S } from '../../src/auth/jwt.js';
import { createToken } from '../../src/auth/tokens.js';
import { CredentialWatch, EXPIRED, REVOKED } from '../../src/events/credentials.js';
import type { Principal } from '../../src/model/principal.js';
import type { TokenRecord } from '../../src/store/store.js';
import { AUDIENCE, ISSUER, mint, nowSeconds } from '../auth/identity-provider.js';
import { testApp, TOKEN } from '../helpers.js';
import { listen, rawStream } from './sse.js';
import { until } from '../toolkit.js';

/**
 * A token is checked when a stream opens, and again while it lives: a stored token revoked, or a JWT past
 * its exp, ends its open streams (a last comment line says why), within a second as it would refuse a new
 * request. Runs on PostgreSQL too (test/store/postgres/http.process.test.ts).
 */

const JWT_SECRET = 'a shared secret of at least 32 bytes for the stream tests';
const jwtKey = { privateKey: new TextEncoder().encode(JWT_SECRET), alg: 'HS256' };

async function post(t: Awaited<ReturnType<typeof testApp>>, id: number): Promise<void> {
  assert.equal((await t.call('POST', '/plants', { body: { id, name: `plant ${id}` } })).statusCode, 200);
}

describe('open event streams and their tokens', () => {
  // Before streams were checked again they never ended: the time-out fails the test instead of hanging it.
  it('ends the streams of a stored token once it is revoked, saying why, and leaves the others open', { timeout: 60_000 }, async () => {
    const t = await testApp(after);
    const origin = await listen(t.app);
    const { secret, record } = await createToken(t.store.tokens, 'browser', ['events:read']);
    const other = await t.tokenWith('events:read');
    const inHeader = await rawStream(`${origin}/events`, { authorization: `Bearer ${secret}` });
    const inUrl = await rawStream(`${origin}/events?access_token=${secret}`, {});
    const untouched = await rawStream(`${origin}/events`, { authorization: `Bearer ${other}` });
    const configured = await rawStream(`${origin}/events`, { authorization: `Bearer ${TOKEN}` });
    for (const stream of [inHeader, inUrl, untouched, configured]) assert.equal(stream.status, 200);
    await post(t, 1);
    await until(() => [inHeader, inUrl, untouched].every((s) => s.text().includes('event: plant.created')), 'the first event on every stream');

    assert.equal(await t.store.tokens.revoke(record.id), true);
    // The answer ends (it does not break): the client sees the reason, then the end.
    assert.equal(await inHeader.ended, true);
    assert.equal(await inUrl.ended, true);
    for (const stream of [inHeader, inUrl]) assert.ok(stream.text().endsWith(`: ${REVOKED}\n\n`), stream.text());
    // A reconnect is refused like any request with that token.
    assert.equal((await fetch(`${origin}/events`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${secret}` } })).status, 401);

    await post(t, 2);
    await until(() => (untouched.text().match(/event: plant.created/g) ?? []).length === 2, 'the second event on the stream of the other token');
    await until(() => (configured.text().match(/event: plant.created/g) ?? []).length === 2, 'the second event on the stream of the static token');
    for (const stream of [inHeader, inUrl]) assert.equal((stream.text().match(/event: plant.created/g) ?? []).length, 1, 'nothing after the end');
    untouched.abort();
    configured.abort();
  });

  it("ends a JWT's stream once the JWT is no longer accepted (its exp plus the clock skew allowed), saying why", { timeout: 60_000 }, async () => {
    const t = await testApp(after, { config: { jwtSecret: JWT_SECRET, jwtIssuer: ISSUER, jwtAudience: AUDIENCE } });
    const origin = await listen(t.app);
    // Past its exp already, within the skew the verifier allows: accepted for two seconds more.
    const ending = await mint(jwtKey, { scope: 'events:read', sub: 'alice', exp: nowSeconds() - JWT_LEEWAY_S + 2 });
    const lasting = await mint(jwtKey, { scope: 'events:read', sub: 'bob' });
    const short = await rawStream(`${origin}/events`, { authorization: `Bearer ${ending}` });
    const long = await rawStream(`${origin}/events`, { authorization: `Bearer ${lasting}` });
    assert.equal(short.status, 200);
    assert.equal(await short.ended, true);
    assert.ok(short.text().endsWith(`: ${EXPIRED}\n\n`), short.text());
    const refused = await fetch(`${origin}/events`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${ending}` } });
    assert.equal(refused.status, 401);
    await post(t, 1);
    await until(() => long.text().includes('event: plant.created'), 'the event on the stream of the lasting JWT');
    long.abort();
  });
});

describe('the credential watch', () => {
  const stored = (tokenId: string): Principal => ({ tokenId, scopes: ['events:read'], source: 'stored' });
  const record = (id: string, revoked: boolean): TokenRecord => ({
    id,
    name: id,
    scopes: ['events:read'],
    createdAt: '2026-01-01T00:00:00.000Z',
    revokedAt: revoked ? '2026-01-02T00:00:00.000Z' : null,
  });
  const quietLog = { warn: () => undefined, info: () => undefined };

  it('reads the tokens once per check whatever the number of streams, and never for static tokens alone', async () => {
    let reads = 0;
    let tokens = [record('a', false), record('b', false)];
    const watch = new CredentialWatch(
      {
        list: () => {
          reads++;
          return Promise.resolve(tokens);
        },
      },
      quietLog,
      60_000,
    );
    after(() => watch.stop());
    const ended: string[] = [];
    const stream = (name: string) => ({ end: (reason: string) => ended.push(`${name}: ${reason}`) });
    const configured = stream('static');
    watch.watch(configured, { tokenId: 'static', scopes: ['events:read'], source: 'static' });
    await watch.check();
    assert.equal(reads, 0, 'static tokens are configuration: nothing to read');
    for (let i = 0; i < 50; i++) watch.watch(stream(`a${i}`), stored('a'));
    watch.watch(stream('b'), stored('b'));
    await watch.check();
    assert.equal(reads, 1);
    assert.equal(ended.length, 0);
    tokens = [record('a', true), record('b', false)];
    await watch.check();
    assert.equal(reads, 2);
    assert.equal(ended.length, 50);
    assert.ok(ended.every((line) => line.endsWith(`: ${REVOKED}`)));
    await watch.check();
    assert.equal(ended.length, 50, 'a stream is ended once');
  });

  it('keeps the streams while the store cannot say (the feed cannot read it either), and ends them once it can', async () => {
    let failing = true;
    const warnings: string[] = [];
    const watch = new CredentialWatch(
      { list: () => (failing ? Promise.reject(new Error('store down')) : Promise.resolve([record('a', true)])) },
      { warn: (_details: unknown, message?: string) => void warnings.push(String(message)), info: () => undefined },
      60_000,
    );
    after(() => watch.stop());
    const ended: string[] = [];
    watch.watch({ end: (reason) => ended.push(reason) }, stored('a'));
    await watch.check();
    await watch.check();
    assert.deepEqual(ended, []);
    assert.equal(warnings.length, 1, 'said once while it lasts');
    failing = false;
    await watch.check();
    assert.deepEqual(ended, [REVOKED]);
  });

  it('ends a JWT stream at its expiry by its own clock', async () => {
    let now = 1_000_000;
    const watch = new CredentialWatch({ list: () => Promise.resolve([]) }, quietLog, 60_000, () => now);
    after(() => watch.stop());
    const ended: string[] = [];
    watch.watch({ end: (reason) => ended.push(reason) }, { tokenId: 'jwt:x:y', scopes: ['events:read'], source: 'jwt', expiresAt: now + 1000 });
    await watch.check();
    assert.deepEqual(ended, []);
    now += 1000;
    await watch.check();
    assert.deepEqual(ended, [EXPIRED]);
  });
});
