import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { exportJWK, SignJWT } from 'jose';
import { assertError, testApp } from '../helpers.js';
import { AUDIENCE, ISSUER, JwksServer, mint, nowSeconds, signingKey } from './identity-provider.js';

/**
 * A refused JWT's 401 names the reason it was refused, not a neighbouring one: the message (and the
 * challenge's error_description) is what an operator setting up an identity provider reads.
 */
describe('JWT refusals name their reason', async () => {
  const [rsa, ec] = await Promise.all([signingKey('rs1'), signingKey('ec1', 'ES256')]);
  const jwks = await JwksServer.start(after, [rsa]);
  const t = await testApp(after, { config: { jwtJwksUrl: jwks.url, jwtIssuer: ISSUER, jwtAudience: AUDIENCE } });
  // The RSA key as a KeyObject, which signs with any RSA algorithm (a WebCrypto key is bound to one).
  const rsaAnyAlg = createPrivateKey({ key: await exportJWK(rsa.privateKey), format: 'jwk' });
  const scope = { scope: 'plants:read' };

  const refused = async (token: string, reason: string) => {
    const res = await t.call('GET', '/plants', { token });
    assertError(res, 401, reason);
    assert.equal(JSON.parse(res.payload).message, reason);
    assert.match(String(res.headers['www-authenticate']), /error="invalid_token", error_description="[^"]+"$/);
  };

  it('a known key id with an algorithm its key is not published for: that, without fetching the keys again', async () => {
    assert.equal((await t.call('GET', '/plants', { token: await mint(rsa, scope) })).statusCode, 200);
    const fetches = jwks.fetches;
    for (const alg of ['PS256', 'RS512']) {
      await refused(
        await mint({ privateKey: rsaAnyAlg, alg, kid: 'rs1' }, scope),
        `the key the JWT names (kid) is not published for its algorithm, ${alg}`,
      );
    }
    await refused(
      await mint({ privateKey: ec.privateKey, alg: 'ES256', kid: 'rs1' }, scope),
      'the key the JWT names (kid) is not published for its algorithm, ES256',
    );
    assert.equal(jwks.fetches, fetches, 'a key id the JWKS holds is no unknown key id');
    // An unknown key id is still said so.
    await refused(await mint({ ...ec, kid: 'nobody' }, scope), "no key of the identity provider matches the JWT's key id");
  });

  it('a claim of the wrong type, or missing, is said so, not as failing its check', async () => {
    await refused(await mint(rsa, { ...scope, nbf: 'x' as unknown as number }), "the JWT's nbf claim is not valid");
    await refused(await mint(rsa, { ...scope, aud: undefined }), 'the JWT has no aud claim');
    await refused(await mint(rsa, { ...scope, iss: undefined }), 'the JWT has no iss claim');
    // The checks themselves keep their words.
    await refused(await mint(rsa, { ...scope, nbf: nowSeconds() + 3600 }), 'the JWT is not valid yet');
    await refused(await mint(rsa, { ...scope, aud: 'elsewhere' }), 'the JWT is for another audience');
  });

  it('a critical header parameter this service does not know is said so, not as the algorithm', async () => {
    const token = await new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'user-1', exp: nowSeconds() + 3600, ...scope })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: 'rs1', crit: ['exp'], exp: nowSeconds() + 3600 })
      .sign(rsa.privateKey, { crit: { exp: true } });
    await refused(token, 'the JWT has a critical header parameter (crit) this service does not support');
  });

  it('scope text holding whitespace other than single spaces is refused, as the array form is, not read as no scope', async () => {
    for (const text of ['plants:read\tevents:read', 'plants:read\nevents:read', 'plants:read\u00a0events:read'])
      await refused(await mint(rsa, { scope: text }), "the JWT's scope claim is not valid: scope names, space-separated or an array of them");
    // Several spaces, or spaces around, are still spaces.
    assert.equal((await t.call('GET', '/plants', { token: await mint(rsa, { scope: ' openid  plants:read ' }) })).statusCode, 200);
  });
});
