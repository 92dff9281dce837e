import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { JWT_LEEWAY_S } from '../../src/auth/jwt.js';
import { createLogger } from '../../src/logging/logger.js';
import { assertError, testApp, TOKEN, type TestApp } from '../helpers.js';
import { AUDIENCE, ISSUER, JwksServer, mint, nowSeconds, signingKey, unsigned } from './identity-provider.js';
import { until } from '../toolkit.js';

const FULL = { scope: 'plants:read plants:write' };
const JWT_SETTINGS = { jwtIssuer: ISSUER, jwtAudience: AUDIENCE };

/** 401 invalid_token in the Error shape, with the reason in the message and the challenge. */
function assertRefused(res: LightMyRequestResponse, reason: string | RegExp): void {
  assertError(res, 401, reason);
  const challenge = String(res.headers['www-authenticate']);
  assert.match(challenge, /^Bearer realm="plant-store", error="invalid_token", error_description="[^"]+"$/);
}

function assertForbidden(res: LightMyRequestResponse, scope: string): void {
  assertError(res, 403, scope);
  assert.match(String(res.headers['www-authenticate']), /error="insufficient_scope"/);
}

const read = (t: TestApp, token: string) => t.call('GET', '/plants/1', { token });
const write = (t: TestApp, token: string) => t.call('PUT', '/plants/1', { token, body: { name: 'Fern' } });

describe('JWTs verified with the keys of a JWKS (JWT_JWKS_URL)', async () => {
  const key = await signingKey('key-a');
  const jwks = await JwksServer.start(after, [key]);
  const t = await testApp(after, { config: { jwtJwksUrl: jwks.url, ...JWT_SETTINGS } });
  assert.equal((await t.call('PUT', '/plants/1', { body: { name: 'Fern' } })).statusCode, 201);

  it('accepts a valid token for what its scopes allow', async () => {
    const token = await mint(key, FULL);
    assert.equal((await read(t, token)).statusCode, 200);
    assert.equal((await write(t, token)).statusCode, 200);
    assert.equal((await t.call('GET', '/plants', { token })).statusCode, 200);
  });

  it('takes the scopes from scope (space-separated) or scp (an array), ignoring unknown names', async () => {
    const readOnly = await mint(key, { scope: 'openid plants:read profile' });
    assert.equal((await read(t, readOnly)).statusCode, 200);
    assertForbidden(await write(t, readOnly), 'plants:write');

    const writeOnly = await mint(key, { scp: ['plants:write', 'plants:admin'] });
    assert.equal((await write(t, writeOnly)).statusCode, 200);
    assertForbidden(await read(t, writeOnly), 'plants:read');

    const webhooks = await mint(key, { scp: 'webhooks:manage' });
    assert.equal((await t.call('GET', '/webhooks', { token: webhooks })).statusCode, 200);
    assertForbidden(await read(t, webhooks), 'plants:read');
  });

  it('takes scope as an array of names too (Spring Authorization Server writes it so), and scp as space-separated text', async () => {
    const array = await mint(key, { scope: ['openid', 'plants:read'] });
    assert.equal((await read(t, array)).statusCode, 200);
    assertForbidden(await write(t, array), 'plants:write');
    const both = await mint(key, { scope: 'plants:read', scp: 'plants:write profile' });
    assert.equal((await write(t, both)).statusCode, 200);
    assert.equal((await read(t, both)).statusCode, 200);
  });

  it('refuses a scope or scp claim of any other shape (401 naming the claim), rather than grant what it can read of it', async () => {
    for (const claims of [
      { scope: 5 },
      { scope: { 'plants:read': true } },
      { scope: ['plants:read', 5] },
      { scope: ['plants:read plants:write'] },
      { scope: [''] },
      { scope: null },
      { scp: true },
      { scp: [['plants:read']] },
    ]) {
      const claim = Object.keys(claims)[0]!;
      assertRefused(
        await read(t, await mint(key, claims)),
        `the JWT's ${claim} claim is not valid: scope names, space-separated or an array of them`,
      );
    }
  });

  it('a valid token with neither scope nor scp may do no plant operation (403)', async () => {
    const token = await mint(key);
    assertForbidden(await t.call('POST', '/plants', { token, body: { id: 2, name: 'x' } }), 'plants:write');
    assertForbidden(await t.call('GET', '/plants', { token }), 'plants:read');
    assertForbidden(await read(t, token), 'plants:read');
    assertForbidden(await write(t, token), 'plants:write');
    assertForbidden(await t.call('PATCH', '/plants/1', { token, body: { tag: 'x' } }), 'plants:write');
    assertForbidden(await t.call('DELETE', '/plants/1', { token }), 'plants:write');
  });

  it('refuses an expired token, allowing 30 s of clock skew', async () => {
    assertRefused(await read(t, await mint(key, { ...FULL, exp: nowSeconds() - JWT_LEEWAY_S - 5 })), 'the JWT has expired');
    assert.equal((await read(t, await mint(key, { ...FULL, exp: nowSeconds() - 10 }))).statusCode, 200);
  });

  it('refuses a token not valid yet (nbf), allowing 30 s of clock skew', async () => {
    assertRefused(await read(t, await mint(key, { ...FULL, nbf: nowSeconds() + JWT_LEEWAY_S + 10 })), 'not valid yet');
    assert.equal((await read(t, await mint(key, { ...FULL, nbf: nowSeconds() + 10 }))).statusCode, 200);
  });

  it('refuses a token without exp: it would never expire', async () => {
    assertRefused(await read(t, await mint(key, { ...FULL, exp: undefined })), 'no exp claim');
  });

  it('refuses a token from another issuer, or for another audience', async () => {
    assertRefused(await read(t, await mint(key, { ...FULL, iss: 'https://evil.example/' })), 'another issuer');
    assertRefused(await read(t, await mint(key, { ...FULL, iss: undefined })), 'iss');
    assertRefused(await read(t, await mint(key, { ...FULL, aud: 'another-service' })), 'another audience');
    assert.equal((await read(t, await mint(key, { ...FULL, aud: ['another-service', AUDIENCE] }))).statusCode, 200);
  });

  it('refuses a token signed by another key, even one naming a published key id', async () => {
    const impostor = await signingKey('key-a');
    assertRefused(await read(t, await mint(impostor, FULL)), 'signature does not verify');
    const stranger = await signingKey('key-unknown');
    assertRefused(await read(t, await mint(stranger, FULL)), 'no key of the identity provider');
  });

  it('refuses alg none, and HS256 keyed with the public key (algorithm confusion)', async () => {
    assertRefused(await read(t, unsigned()), 'algorithm is not accepted');
    const publicKeyAsSecret = new TextEncoder().encode(JSON.stringify(key.jwk));
    assertRefused(await read(t, await mint({ privateKey: publicKeyAsSecret, alg: 'HS256', kid: 'key-a' }, FULL)), 'algorithm is not accepted');
  });

  it('refuses a malformed JWT, and still tells a JWT-shaped token from a store token', async () => {
    const token = await mint(key, FULL);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    assertRefused(await read(t, `${header}.${payload}x.${signature}`), /JWT/);
    assertRefused(await read(t, `a.b.c`), 'the JWT is malformed');
    assertRefused(await read(t, `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from('[1]').toString('base64url')}.c2ln`), /JWT/);
    assertRefused(await read(t, 'ps_not-a-stored-token'), 'unknown or revoked bearer token');
  });

  it('keeps the static and stored tokens working beside JWTs', async () => {
    assert.equal((await read(t, TOKEN)).statusCode, 200);
    const stored = await t.tokenWith('plants:read');
    assert.equal((await read(t, stored)).statusCode, 200);
    assertForbidden(await write(t, stored), 'plants:write');
  });

  it('never accepts a token after its exp plus the leeway, even one it has seen valid', async () => {
    // Accepted for 1 to 2 s more (claims count whole seconds), then never again.
    const exp = nowSeconds() - JWT_LEEWAY_S + 2;
    const token = await mint(key, { ...FULL, exp });
    assert.equal((await read(t, token)).statusCode, 200);
    // Time itself is the point: past exp and the leeway by the clock.
    await until(() => Date.now() > (exp + JWT_LEEWAY_S) * 1000, 'the token to be past its exp and the leeway');
    assertRefused(await read(t, token), 'the JWT has expired');
  });
});

describe('key rotation at the identity provider', () => {
  it('picks up a key the provider added after the service fetched its keys (rotation)', async () => {
    const key = await signingKey('key-a');
    const jwks = await JwksServer.start(after, [key]);
    const t = await testApp(after, { config: { jwtJwksUrl: jwks.url, ...JWT_SETTINGS } });
    assert.equal((await t.call('GET', '/plants', { token: await mint(key, FULL) })).statusCode, 200);
    const fetches = jwks.fetches;
    const rotated = await signingKey('key-b', 'ES256');
    jwks.keys = [key.jwk, rotated.jwk];
    assert.equal((await t.call('GET', '/plants', { token: await mint(rotated, FULL) })).statusCode, 200);
    assert.equal(jwks.fetches, fetches + 1, 'the unknown key id made the service fetch the keys once');
    // Another unknown key id right after: no new fetch within 30 s (test/auth/jwks.test.ts shows the next one).
    assertRefused(await t.call('GET', '/plants', { token: await mint(await signingKey('key-c'), FULL) }), 'no key');
    assert.equal(jwks.fetches, fetches + 1);
  });
});

describe('JWTs verified with a public key (JWT_PUBLIC_KEY)', async () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string;
  const t = await testApp(after, { config: { jwtPublicKey: pem, ...JWT_SETTINGS } });
  assert.equal((await t.call('PUT', '/plants/1', { body: { name: 'Fern' } })).statusCode, 201);

  it('accepts RS256 and PS256 tokens signed by its private key', async () => {
    assert.equal((await read(t, await mint({ privateKey: rsa.privateKey, alg: 'RS256' }, FULL))).statusCode, 200);
    assert.equal((await read(t, await mint({ privateKey: rsa.privateKey, alg: 'PS512' }, FULL))).statusCode, 200);
  });

  it('refuses another key, alg none, and HS256 keyed with the PEM text', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
    assertRefused(await read(t, await mint({ privateKey: other.privateKey, alg: 'RS256' }, FULL)), 'signature does not verify');
    assertRefused(await read(t, unsigned()), 'algorithm is not accepted');
    assertRefused(await read(t, await mint({ privateKey: new TextEncoder().encode(pem), alg: 'HS256' }, FULL)), 'algorithm is not accepted');
  });

  it('takes an EC key for ES256, and only ES256', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ecPem = (ec.publicKey.export({ type: 'spki', format: 'pem' }) as string).replace(/\n/g, '\\n');
    const app = await testApp(after, { config: { jwtPublicKey: ecPem, ...JWT_SETTINGS } });
    assert.equal((await app.call('GET', '/plants', { token: await mint({ privateKey: ec.privateKey, alg: 'ES256' }, FULL) })).statusCode, 200);
    assertRefused(await app.call('GET', '/plants', { token: await mint({ privateKey: rsa.privateKey, alg: 'RS256' }, FULL) }), 'algorithm');
  });
});

describe('JWTs verified with a shared secret (JWT_SECRET, HS256)', async () => {
  const secret = 'a shared secret of at least 32 bytes, é included';
  const t = await testApp(after, { config: { jwtSecret: secret, ...JWT_SETTINGS } });
  const key = { privateKey: new TextEncoder().encode(secret), alg: 'HS256' };

  it('accepts HS256 with the secret as UTF-8 bytes', async () => {
    assert.equal((await t.call('GET', '/plants', { token: await mint(key, FULL) })).statusCode, 200);
  });

  it('refuses another secret, another HMAC algorithm, and alg none', async () => {
    const other = { privateKey: new TextEncoder().encode(`${secret}!`), alg: 'HS256' };
    assertRefused(await t.call('GET', '/plants', { token: await mint(other, FULL) }), 'signature does not verify');
    assertRefused(await t.call('GET', '/plants', { token: await mint({ ...key, alg: 'HS512' }, FULL) }), 'algorithm is not accepted');
    assertRefused(await t.call('GET', '/plants', { token: unsigned() }), 'algorithm is not accepted');
  });
});

describe('JWTs and the rest of the service', async () => {
  const key = await signingKey('key-a');
  const jwks = await JwksServer.start(after, [key]);

  it('counts the rate limit per subject (jwt:<iss>:<sub>), across the tokens issued to it', async () => {
    const t = await testApp(after, { config: { jwtJwksUrl: jwks.url, ...JWT_SETTINGS, rateLimitPerMinute: 2 } });
    const first = await mint(key, { ...FULL, sub: 'alice', jti: '1' });
    const second = await mint(key, { ...FULL, sub: 'alice', jti: '2' });
    assert.equal((await t.call('GET', '/plants', { token: first })).statusCode, 200);
    assert.equal((await t.call('GET', '/plants', { token: second })).statusCode, 200);
    assertError(await t.call('GET', '/plants', { token: second }), 429);
    assert.equal((await t.call('GET', '/plants', { token: await mint(key, { ...FULL, sub: 'bob' }) })).statusCode, 200);
  });

  it('never writes a token, valid or not, to the log', async () => {
    const sink = new (class extends Writable {
      text = '';
      override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
        this.text += chunk.toString('utf8');
        callback();
      }
    })();
    const t = await testApp(after, { config: { jwtJwksUrl: jwks.url, ...JWT_SETTINGS }, logger: createLogger('trace', sink) });
    const tokens = [
      await mint(key, FULL),
      await mint(key, { ...FULL, exp: nowSeconds() - 3600 }),
      unsigned(),
      await mint(await signingKey('x'), FULL),
    ];
    for (const token of tokens) await t.call('GET', '/plants', { token });
    assert.ok(sink.text.includes('"status":200') && sink.text.includes('"status":401'), sink.text);
    for (const token of tokens) {
      for (const part of token.split('.').filter((p) => p.length > 8))
        assert.ok(!sink.text.includes(part), `the log carries a piece of a token:\n${sink.text}`);
    }
  });
});

describe('with the JWKS endpoint down', async () => {
  it('static and stored tokens answer at once; a JWT gets 503 with Retry-After', async () => {
    const gone = await JwksServer.start(after);
    const url = gone.url;
    await gone.stop();
    const t = await testApp(after, { config: { jwtJwksUrl: url, ...JWT_SETTINGS } });
    const stored = await t.tokenWith('plants:read');
    for (const token of [TOKEN, stored]) {
      const started = performance.now();
      assert.equal((await t.call('GET', '/plants', { token })).statusCode, 200);
      // Generous for a loaded machine, and short of the key fetch's 5 s time-out that a token held up by the keys would wait out.
      assert.ok(performance.now() - started < 4000, 'answered at once');
    }
    const res = await t.call('GET', '/plants', { token: await mint(await signingKey('key-a'), FULL) });
    assertError(res, 503, 'JWT_JWKS_URL');
    assert.equal(res.headers['retry-after'], '5');
  });

  it('a static token is not held up by a JWKS endpoint that never answers', async () => {
    const hanging = await JwksServer.start(after);
    hanging.mode = 'hang';
    const t = await testApp(after, { config: { jwtJwksUrl: hanging.url, ...JWT_SETTINGS } });
    // A JWT waits for the keys (at most the fetch's 5 s time-out); a static token meanwhile does not.
    const jwtAnswer = t.call('GET', '/plants', { token: await mint(await signingKey('key-a'), FULL) });
    const staticAnswer = t.call('GET', '/plants');
    // Answered while the JWT still waits for the keys: the static token's answer comes first.
    const first = await Promise.race([jwtAnswer.then(() => 'the JWT'), staticAnswer.then(() => 'the static token')]);
    assert.equal(first, 'the static token');
    assert.equal((await staticAnswer).statusCode, 200);
    assertError(await jwtAnswer, 503, 'JWT_JWKS_URL');
    assert.ok(hanging.fetches >= 1);
  });
});
