import { Type } from '@sinclair/typebox';
import { jwksUrl, jwtType, publicKeyFromPem, secretKey } from './jwt-keys.js';
import { commaList, type Setting } from './setting.js';

/** Who may call: the service's static tokens, and JWTs of an identity provider. */

/** RFC 6750 b64token: what a bearer token may contain. */
export const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** A media type's name (RFC 6838 restricted names), with or without its `application/` part. */
const MEDIA_TYPE = '^([A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/)?[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$';

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
        "Accept JWTs signed by the keys of this JWKS (an identity provider's `https://…/jwks.json`; plain `http://` only to a loopback host), fetched and cached; needs `JWT_ISSUER` and `JWT_AUDIENCE` (see [Tokens and JWTs](tokens.md#jwts-from-an-identity-provider))",
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
  jwtTypes: {
    env: 'JWT_TYPES',
    schema: Type.Array(
      Type.String({
        pattern: MEDIA_TYPE,
        patternMeaning: 'must be a media type (at+jwt, application/at+jwt) or the word absent',
      }),
      {
        minItems: 1,
        default: ['at+jwt', 'jwt', 'absent'],
        itemName: 'type',
        description:
          'The `typ` headers an accepted JWT may carry (comma-separated, any case, `application/` optional); `absent`: a JWT without `typ` (see [Tokens and JWTs](tokens.md#jwts-from-an-identity-provider))',
      },
    ),
    // Compared as RFC 7515 says: case-insensitively, and `application/` may be left out.
    parse: (text: string) => commaList(text, 'type').map(jwtType),
    docDefault: '`at+jwt,JWT,absent`',
  },
} satisfies Record<string, Setting>;
