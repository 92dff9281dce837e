import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.js';

/**
 * The JWT settings: what a start accepts, and the one-line message naming the setting otherwise (a real
 * server's start refused for them: test/process/start.process.test.ts).
 */

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string;
const SECRET = 'x'.repeat(32);
const CLAIMS = { JWT_ISSUER: 'https://id.example/', JWT_AUDIENCE: 'plant-store' };

function refusal(env: Record<string, string>): ConfigError {
  let caught: unknown;
  try {
    loadConfig(env);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ConfigError, `${Object.keys(env).join(', ')} should be refused`);
  assert.ok(!caught.message.includes('\n'), `one line: ${caught.message}`);
  assert.ok(caught.message.startsWith(`${caught.setting}: `), caught.message);
  return caught;
}

describe('JWT settings', () => {
  it('are off by default', () => {
    const config = loadConfig({});
    assert.deepEqual([config.jwtJwksUrl, config.jwtPublicKey, config.jwtSecret, config.jwtIssuer, config.jwtAudience], ['', '', '', '', '']);
  });

  it('take a JWKS URL, a PEM (also on one line with \\n) or a secret of 32 bytes, with the issuer and audience', () => {
    assert.equal(loadConfig({ JWT_JWKS_URL: 'https://id.example/jwks.json', ...CLAIMS }).jwtJwksUrl, 'https://id.example/jwks.json');
    // Plain http only to a loopback host (a provider's proxy, or a test's): 127.0.0.0/8, ::1, localhost.
    for (const loopback of ['http://127.0.0.1:9000/keys', 'http://127.9.8.7/keys', 'http://[::1]:9000/keys', 'http://localhost:9000/keys']) {
      assert.equal(loadConfig({ JWT_JWKS_URL: loopback, ...CLAIMS }).jwtJwksUrl, loopback);
    }
    assert.equal(loadConfig({ JWT_JWKS_URL: 'http://LocalHost/keys', ...CLAIMS }).jwtJwksUrl, 'http://localhost/keys');
    assert.equal(loadConfig({ JWT_PUBLIC_KEY: PEM, ...CLAIMS }).jwtPublicKey, PEM);
    assert.ok(loadConfig({ JWT_PUBLIC_KEY: PEM.replace(/\n/g, '\\n'), ...CLAIMS }).jwtPublicKey);
    const config = loadConfig({ JWT_SECRET: SECRET, ...CLAIMS });
    assert.deepEqual([config.jwtSecret, config.jwtIssuer, config.jwtAudience], [SECRET, CLAIMS.JWT_ISSUER, CLAIMS.JWT_AUDIENCE]);
    // 16 two-byte characters are 32 bytes.
    assert.equal(loadConfig({ JWT_SECRET: 'é'.repeat(16), ...CLAIMS }).jwtSecret, 'é'.repeat(16));
  });

  const refused: Array<[string, Record<string, string>, string, RegExp]> = [
    ['a key without JWT_ISSUER', { JWT_JWKS_URL: 'https://id.example/jwks.json', JWT_AUDIENCE: 'a' }, 'JWT_ISSUER', /required with JWT_JWKS_URL/],
    ['a key without JWT_AUDIENCE', { JWT_SECRET: SECRET, JWT_ISSUER: 'i' }, 'JWT_AUDIENCE', /required with JWT_SECRET/],
    ['an issuer without a key', { ...CLAIMS }, 'JWT_ISSUER', /JWTs are off/],
    [
      'two keys',
      { JWT_JWKS_URL: 'https://id.example/jwks.json', JWT_SECRET: SECRET, ...CLAIMS },
      'JWT_JWKS_URL',
      /only one of .* got JWT_JWKS_URL and JWT_SECRET/,
    ],
    [
      'three keys',
      { JWT_JWKS_URL: 'https://id.example/jwks.json', JWT_PUBLIC_KEY: PEM, JWT_SECRET: SECRET, ...CLAIMS },
      'JWT_JWKS_URL',
      /only one of/,
    ],
    ['a short secret', { JWT_SECRET: 'x'.repeat(31), ...CLAIMS }, 'JWT_SECRET', /at least 32 bytes .* got 31/],
    [
      'a PEM that does not parse',
      { JWT_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----', ...CLAIMS },
      'JWT_PUBLIC_KEY',
      /not a public key in PEM form/,
    ],
    [
      'a private key',
      { JWT_PUBLIC_KEY: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, ...CLAIMS },
      'JWT_PUBLIC_KEY',
      /private key/,
    ],
    [
      'a key that signs no JWT',
      { JWT_PUBLIC_KEY: generateKeyPairSync('x25519').publicKey.export({ type: 'spki', format: 'pem' }) as string, ...CLAIMS },
      'JWT_PUBLIC_KEY',
      /x25519/,
    ],
    ['a JWKS URL that is not http(s)', { JWT_JWKS_URL: 'ftp://id.example/jwks.json', ...CLAIMS }, 'JWT_JWKS_URL', /must be an https:\/\/ URL/],
    ['a JWKS URL that is no URL', { JWT_JWKS_URL: 'id.example/jwks.json', ...CLAIMS }, 'JWT_JWKS_URL', /must be an https:\/\/ URL/],
    [
      'a plain-http JWKS URL to a public host',
      { JWT_JWKS_URL: 'http://id.example/jwks.json', ...CLAIMS },
      'JWT_JWKS_URL',
      /must be https:\/\/.*loopback/,
    ],
    [
      'a plain-http JWKS URL to a public address',
      { JWT_JWKS_URL: 'http://93.184.215.14/jwks.json', ...CLAIMS },
      'JWT_JWKS_URL',
      /must be https:\/\//,
    ],
    ['a plain-http JWKS URL to a private address', { JWT_JWKS_URL: 'http://10.0.0.5:8080/keys', ...CLAIMS }, 'JWT_JWKS_URL', /must be https:\/\//],
    [
      'a plain-http JWKS URL to a name under localhost',
      { JWT_JWKS_URL: 'http://id.localhost.example/k', ...CLAIMS },
      'JWT_JWKS_URL',
      /must be https:\/\//,
    ],
    ['a plain-http JWKS URL to an unspecified address', { JWT_JWKS_URL: 'http://0.0.0.0/k', ...CLAIMS }, 'JWT_JWKS_URL', /must be https:\/\//],
    ['a JWKS URL with a password', { JWT_JWKS_URL: 'https://u:hunter2@id.example/jwks.json', ...CLAIMS }, 'JWT_JWKS_URL', /password/],
  ];
  for (const [what, env, setting, message] of refused) {
    it(`stop the start for ${what}, naming ${setting}`, () => {
      const error = refusal(env);
      assert.equal(error.setting, setting);
      assert.match(error.message, message);
    });
  }

  it('never put a secret, a key or a password in the message', () => {
    const secret = 'short-secret-value';
    assert.ok(!refusal({ JWT_SECRET: secret, ...CLAIMS }).message.includes(secret));
    const privatePem = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    assert.ok(!refusal({ JWT_PUBLIC_KEY: privatePem, ...CLAIMS }).message.includes(privatePem.split('\n')[1]!));
    assert.ok(!refusal({ JWT_JWKS_URL: 'ftp://u:hunter2@id.example/k', ...CLAIMS }).message.includes('hunter2'));
  });
});
