import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { once } from 'node:events';
import { JWKS_MAX_BYTES, JWKS_REFRESH_MS, JWKS_RETRY_MS, JWKS_UNKNOWN_KID_REFETCH_MS, KeysUnavailableError } from '../../src/auth/jwks.js';
import { JwtVerifier, type VerifiedJwt } from '../../src/auth/jwt.js';
import { AUDIENCE, ISSUER, JwksServer, mint, signingKey } from './identity-provider.js';
import { until } from '../toolkit.js';

/** The remote key set's fetching rules, on a clock the test moves (tokens live an hour, far beyond the moves). */
describe('the JWKS cache', async () => {
  const [a, b, c] = await Promise.all([signingKey('a'), signingKey('b', 'ES256'), signingKey('c', 'EdDSA')]);
  const tokenA = await mint(a, { scope: 'plants:read' });
  const tokenB = await mint(b, { scope: 'plants:read' });
  const tokenC = await mint(c, { scope: 'plants:read' });

  async function setup() {
    const jwks = await JwksServer.start(after, [a]);
    const clock = { now: Date.now() };
    const failures: string[] = [];
    const settings = { jwtJwksUrl: jwks.url, jwtPublicKey: '', jwtSecret: '', jwtIssuer: ISSUER, jwtAudience: AUDIENCE };
    const verifier = JwtVerifier.fromConfig(
      settings,
      (reason) => failures.push(reason),
      () => clock.now,
    )!;
    after(() => verifier.close());
    const accepted = async (token: string) => typeof (await verifier.verify(token)) !== 'string';
    return { jwks, clock, failures, verifier, accepted };
  }

  it('fetches once for many tokens, and again for an unknown key id at most once per 30 s', async () => {
    const { jwks, clock, accepted } = await setup();
    assert.deepEqual(await Promise.all([accepted(tokenA), accepted(tokenA), accepted(tokenA)]), [true, true, true]);
    assert.equal(jwks.fetches, 1, 'one fetch shared by the tokens that arrived together');

    jwks.keys = [a.jwk, b.jwk];
    assert.equal(await accepted(tokenB), true, 'the new key id made it fetch again');
    assert.equal(jwks.fetches, 2);

    jwks.keys = [a.jwk, b.jwk, c.jwk];
    clock.now += JWKS_UNKNOWN_KID_REFETCH_MS - 1000;
    assert.equal(await accepted(tokenC), false, 'within 30 s of the last such fetch: refused without fetching');
    assert.equal(jwks.fetches, 2);
    clock.now += 1000;
    assert.equal(await accepted(tokenC), true, '30 s later the unknown key id is fetched and found');
    assert.equal(jwks.fetches, 3);
  });

  it('refreshes the keys every 10 minutes in the background, and keeps the known keys while the provider fails', async () => {
    const { jwks, clock, failures, accepted } = await setup();
    assert.equal(await accepted(tokenA), true);
    jwks.mode = 'fail';
    clock.now += JWKS_REFRESH_MS;
    assert.equal(await accepted(tokenA), true, 'the known key still serves');
    await until(() => failures.length === 1, 'the failed refresh to be reported');
    assert.match(failures[0]!, /500/);
    assert.equal(jwks.fetches, 2);
    clock.now += 1000;
    assert.equal(await accepted(tokenA), true);
    assert.equal(jwks.fetches, 2, 'a failed refresh is not tried again at once');

    jwks.mode = 'serve';
    jwks.keys = [b.jwk];
    clock.now += JWKS_UNKNOWN_KID_REFETCH_MS;
    assert.equal(await accepted(tokenA), true, 'answered with the known keys while the refresh runs');
    assert.equal(await accepted(tokenB), true, 'the refreshed keys (waited for, since its key id was unknown)');
    assert.equal(jwks.fetches, 3);
    assert.equal(await accepted(tokenA), false, 'a key the provider withdrew is refused after the refresh');
  });

  it('without keys, answers 503 at once between attempts, 5 s apart, and recovers', async () => {
    const { jwks, clock, failures, verifier } = await setup();
    jwks.mode = 'fail';
    const unavailable = (error: unknown) => error instanceof KeysUnavailableError && error.retryAfterSeconds === 5;
    await assert.rejects(verifier.verify(tokenA), unavailable);
    await assert.rejects(verifier.verify(tokenA), unavailable);
    assert.equal(jwks.fetches, 1, 'the second token did not fetch again');
    assert.equal(failures.length, 1);
    jwks.mode = 'serve';
    clock.now += JWKS_RETRY_MS;
    const verified = (await verifier.verify(tokenA)) as VerifiedJwt;
    assert.equal(verified.principal.tokenId, 'jwt:https%3A//id.example/:sub:user-1');
    assert.deepEqual(verified.principal.scopes, ['plants:read']);
    assert.equal(jwks.fetches, 2);
  });

  it('reads at most 1 MiB of an answer: 2 MiB is refused (503, a warning), said long or streamed, without reading on', async () => {
    const { jwks, clock, failures, verifier } = await setup();
    const unavailable = (error: unknown) => error instanceof KeysUnavailableError;
    const MiB = 1024 * 1024;
    assert.equal(JWKS_MAX_BYTES, MiB);
    // A key set padded to 2 MiB, its length said up front: refused before its body is read.
    const padded = JSON.stringify({ keys: [a.jwk], padding: 'x'.repeat(2 * MiB) });
    jwks.answer = (response) =>
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(padded) }).end(padded);
    await assert.rejects(verifier.verify(tokenA), unavailable);
    assert.match(failures.at(-1) ?? '', /^answered more than 1 MiB, more than a key set takes: not read further$/);

    // Streamed without a length, and never ending: the fetch stops reading past 1 MiB and closes the connection.
    let written = 0;
    let closed: Promise<unknown> = Promise.resolve();
    jwks.answer = (response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"keys":[],"padding":"');
      const chunk = 'x'.repeat(64 * 1024);
      const more = () => {
        // Up to 64 MiB, as fast as the reader takes it.
        while (!response.destroyed && written < 64 * MiB && response.write(chunk)) written += chunk.length;
        if (!response.destroyed && written < 64 * MiB) response.once('drain', more);
      };
      more();
      closed = once(response, 'close');
    };
    const failed = failures.length;
    clock.now += JWKS_RETRY_MS;
    await assert.rejects(verifier.verify(tokenA), unavailable);
    assert.equal(failures.length, failed + 1);
    assert.match(failures.at(-1)!, /^answered more than 1 MiB/);
    await closed;
    assert.ok(written < 64 * MiB, `the provider wrote ${written} bytes before the connection closed`);

    // A key set under the cap (padded to nearly 1 MiB) is taken.
    const large = JSON.stringify({ keys: [a.jwk], padding: 'x'.repeat(MiB - 4096) });
    jwks.answer = (response) => response.writeHead(200, { 'content-type': 'application/json' }).end(large);
    clock.now += JWKS_RETRY_MS;
    assert.equal(typeof (await verifier.verify(tokenA)), 'object');
  });
});
