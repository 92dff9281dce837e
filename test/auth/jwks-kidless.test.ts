import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertError, testApp } from '../helpers.js';
import { AUDIENCE, ISSUER, JwksServer, mint, signingKey } from './identity-provider.js';

/**
 * A JWT without `kid` (RFC 7515 makes it optional) matches every key of its type in the JWKS. While a
 * provider rotates, two are published side by side: each is tried, and the token is taken when one of
 * them verifies it.
 */

describe('a JWT without kid, with several keys of its type in the JWKS', async () => {
  const [old, current, foreign, ec] = await Promise.all([signingKey('old'), signingKey('new'), signingKey('foreign'), signingKey('ec', 'ES256')]);
  // The new key published without alg, as some providers do: it matches by its type alone.
  const { alg: _alg, ...currentWithoutAlg } = current.jwk;
  const jwks = await JwksServer.start(after, [old, ec]);
  jwks.keys = [old.jwk, currentWithoutAlg, ec.jwk];
  const t = await testApp(after, { config: { jwtJwksUrl: jwks.url, jwtIssuer: ISSUER, jwtAudience: AUDIENCE } });
  const kidless = (key: typeof old) => mint({ privateKey: key.privateKey, alg: key.alg }, { scope: 'plants:read' });

  it('is taken when signed by any of them (the old key or the new one)', async () => {
    for (const key of [old, current]) {
      const res = await t.call('GET', '/plants', { token: await kidless(key) });
      assert.equal(res.statusCode, 200, `signed by ${key.kid}: ${res.payload}`);
    }
  });

  it('is refused 401 naming the signature when none of them verifies it, not as malformed', async () => {
    const res = await t.call('GET', '/plants', { token: await kidless(foreign) });
    assertError(res, 401, "the JWT's signature does not verify");
    assert.match(String(res.headers['www-authenticate']), /error_description="the JWT's signature does not verify"/);
  });

  it('a token of another key type is checked against its own type only', async () => {
    assert.equal((await t.call('GET', '/plants', { token: await kidless(ec) })).statusCode, 200);
  });
});
