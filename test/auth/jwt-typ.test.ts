import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { SignJWT, type JWTHeaderParameters } from 'jose';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { assertError, testApp } from '../helpers.js';
import { AUDIENCE, ISSUER, nowSeconds } from './identity-provider.js';

/**
 * The JWT's `typ` header (RFC 8725 §3.11: tell kinds of JWT apart): JWT_TYPES lists the types accepted,
 * by default `at+jwt` (RFC 9068 access tokens), `JWT`, and none at all; any case, `application/` optional.
 */

const SECRET = 'a-shared-secret-of-at-least-32-bytes!';
const key = new TextEncoder().encode(SECRET);
const settings = { jwtSecret: SECRET, jwtIssuer: ISSUER, jwtAudience: AUDIENCE };

/** A valid HS256 token with this typ header (undefined: none). */
function token(typ: unknown): Promise<string> {
  const header = { alg: 'HS256', ...(typ === undefined ? {} : { typ }) } as JWTHeaderParameters;
  return new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'user-1', exp: nowSeconds() + 3600, scope: 'plants:read' })
    .setProtectedHeader(header)
    .sign(key);
}

const ACCEPTED_BY_DEFAULT = [undefined, 'JWT', 'jwt', 'at+jwt', 'AT+JWT', 'At+Jwt', 'application/at+jwt', 'Application/AT+JWT', 'application/jwt'];
const REFUSED_BY_DEFAULT = [
  'secevent+jwt',
  'logout+jwt',
  'dpop+jwt',
  'id_token+jwt',
  'JOSE',
  'JOSE+JSON',
  'JWE',
  '',
  'at+jwt ',
  'application/',
  'text/jwt',
  1,
  null,
];

describe('JWT typ', async () => {
  const t = await testApp(after, { config: settings });

  for (const typ of ACCEPTED_BY_DEFAULT) {
    it(`by default accepts typ ${JSON.stringify(typ) ?? '(none)'}`, async () => {
      const res = await t.call('GET', '/plants', { token: await token(typ) });
      assert.equal(res.statusCode, 200, res.payload);
    });
  }
  for (const typ of REFUSED_BY_DEFAULT) {
    it(`by default refuses typ ${JSON.stringify(typ)}: 401 invalid_token saying why`, async () => {
      const res = await t.call('GET', '/plants', { token: await token(typ) });
      assertError(res, 401, "the JWT's type (typ) is not accepted");
      assert.match(String(res.headers['www-authenticate']), /error="invalid_token", error_description="the JWT's type \(typ\) is not accepted"/);
    });
  }

  it('JWT_TYPES=at+jwt accepts RFC 9068 access tokens only: JWT and no typ are refused', async () => {
    const strict = await testApp(after, { config: { ...settings, jwtTypes: loadConfig({ JWT_TYPES: 'at+jwt' }).jwtTypes } });
    for (const typ of ['at+jwt', 'application/at+jwt', 'AT+JWT'])
      assert.equal((await strict.call('GET', '/plants', { token: await token(typ) })).statusCode, 200, typ);
    for (const typ of ['JWT', undefined]) assertError(await strict.call('GET', '/plants', { token: await token(typ) }), 401, 'typ');
  });

  it('JWT_TYPES=absent,secevent+jwt: exactly those', async () => {
    const custom = await testApp(after, { config: { ...settings, jwtTypes: loadConfig({ JWT_TYPES: 'absent, SecEvent+JWT' }).jwtTypes } });
    for (const typ of [undefined, 'secevent+jwt', 'application/secevent+jwt'])
      assert.equal((await custom.call('GET', '/plants', { token: await token(typ) })).statusCode, 200, String(typ));
    for (const typ of ['JWT', 'at+jwt']) assertError(await custom.call('GET', '/plants', { token: await token(typ) }), 401, 'typ');
  });
});

describe('the JWT_TYPES setting', () => {
  it('defaults to at+jwt, JWT and none; reads any case, with or without application/', () => {
    assert.deepEqual(loadConfig({}).jwtTypes, ['at+jwt', 'jwt', 'absent']);
    assert.deepEqual(loadConfig({ JWT_TYPES: 'Application/AT+JWT, JWT' }).jwtTypes, ['at+jwt', 'jwt']);
  });

  it('refuses what is no media type, naming the setting', () => {
    for (const text of ['at jwt', 'at+jwt,,jwt', '"jwt"', 'a/b/c', '/jwt', 'jwt/']) {
      assert.throws(
        () => loadConfig({ JWT_TYPES: text }),
        (error: unknown) => error instanceof ConfigError && error.setting === 'JWT_TYPES' && !error.message.includes('\n'),
        text,
      );
    }
  });
});
