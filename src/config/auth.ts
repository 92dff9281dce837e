import { Type } from '@sinclair/typebox';
import { jwksUrl, publicKeyFromPem, secretKey } from '../auth/jwt-keys.js';
import type { Setting } from './setting.js';

/** Who may call: the service's static tokens, and JWTs of an identity provider. */

/** RFC 6750 b64token: what a bearer token may contain. */
export const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** The shortest static token accepted (PLANT_STORE_TOKENS): a short one is a password anyone can guess. */
export const STATIC_TOKEN_MIN_LENGTH = 32;

export const AUTH_SETTINGS = {
  tokens: {
    env: 'PLANT_STORE_TOKENS',
    schema: Type.Array(
      Type.String({
        // Long enough that guessing one is hopeless: 32 characters of a random token carry 190 bits or more.
        minLength: STATIC_TOKEN_MIN_LENGTH,
        pattern: BEARER_TOKEN.source,
        patternMeaning: 'has characters a bearer token cannot carry (allowed: A-Z a-z 0-9 - . _ ~ + / and trailing =)',
      }),
      { default: [], itemName: 'token', description: 'Comma-separated static bearer tokens, each with full access and at least 32 characters long' },
    ),
    // A message never repeats a token: it is a secret.
    secret: true,
  },
  jwtJwksUrl: {
    env: 'JWT_JWKS_URL',
    schema: Type.String({
      default: '',
      description:
        "Accept JWTs signed by the keys of this JWKS (an identity provider's `https://…/jwks.json`; plain `http://` only to a loopback host), fetched and cached; needs `JWT_ISSUER` and `JWT_AUDIENCE` (see JWT)",
    }),
    parse: (text: string) => jwksUrl(text).href,
    docDefault: 'off',
  },
  jwtPublicKey: {
    env: 'JWT_PUBLIC_KEY',
    schema: Type.String({
      default: '',
      description: 'Accept JWTs signed by this key instead: a PEM public key or certificate (RSA, EC or Ed25519; `\\n` for line breaks on one line)',
    }),
    parse: (text: string) => (publicKeyFromPem(text), text),
    docDefault: 'off',
  },
  jwtSecret: {
    env: 'JWT_SECRET',
    schema: Type.String({
      default: '',
      description: 'Accept JWTs signed with HS256 by this shared secret instead (its text as UTF-8, at least 32 bytes)',
    }),
    // The message never repeats the secret.
    parse: (text: string) => (secretKey(text), text),
    secret: true,
    docDefault: 'off',
  },
  jwtIssuer: {
    env: 'JWT_ISSUER',
    schema: Type.String({ default: '', description: 'The `iss` every accepted JWT names (required with a JWT key)' }),
    docDefault: 'none',
  },
  jwtAudience: {
    env: 'JWT_AUDIENCE',
    schema: Type.String({ default: '', description: 'The `aud` every accepted JWT names, or includes (required with a JWT key)' }),
    docDefault: 'none',
  },
} satisfies Record<string, Setting>;
