import { createPublicKey, type KeyObject } from 'node:crypto';
import { isLoopbackHost } from '../net/loopback.js';
import { redactUrl } from '../store/database-url.js';

/**
 * What may verify a JWT, and with which algorithms: an allow-list fitting each kind of key, so that a
 * token cannot choose how it is checked (never `none`, never HMAC with a public key as the secret).
 * The configuration (src/config/config.ts) checks the settings with these functions at start.
 */

/** The algorithms of keys an identity provider publishes in a JWKS (asymmetric only: a JWKS is public). */
export const JWKS_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** The one algorithm of JWT_SECRET. */
export const SECRET_ALGORITHMS = ['HS256'];

/** HS256's key should be as long as its output: shorter secrets can be guessed offline from any token. */
export const SECRET_MIN_BYTES = 32;

const EC_ALGORITHMS: Record<string, string> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };

/** Environments often carry a PEM on one line with `\n` spelled out; both spellings mean the same key. */
function pemText(text: string): string {
  return text.includes('\\n') ? text.replace(/\\n/g, '\n') : text;
}

/** The public key of a PEM (SPKI public key or X.509 certificate); throws an Error saying what is wrong. */
export function publicKeyFromPem(text: string): KeyObject {
  const pem = pemText(text.trim());
  if (/PRIVATE KEY-----/.test(pem)) throw new Error('is a private key: give the public key (-----BEGIN PUBLIC KEY-----) instead');
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    throw new Error('is not a public key in PEM form (-----BEGIN PUBLIC KEY----- or -----BEGIN CERTIFICATE-----)');
  }
  publicKeyAlgorithms(key);
  return key;
}

/** The algorithms that this public key verifies; throws for a kind of key that signs no JWT algorithm used here. */
export function publicKeyAlgorithms(key: KeyObject): string[] {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
    case 'rsa-pss':
      return ['PS256', 'PS384', 'PS512'];
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve ?? '';
      const algorithm = EC_ALGORITHMS[curve];
      if (algorithm === undefined) throw new Error(`is an EC key on ${curve || 'an unknown curve'}: JWTs use P-256, P-384 or P-521`);
      return [algorithm];
    }
    case 'ed25519':
      return ['EdDSA', 'Ed25519'];
    default:
      throw new Error(`is a ${key.asymmetricKeyType ?? 'unknown'} key: JWTs here are verified with RSA, EC (P-256, P-384, P-521) or Ed25519 keys`);
  }
}

/** JWT_SECRET as the HS256 key: its text as UTF-8 bytes. The message never repeats the secret. */
export function secretKey(text: string): Uint8Array {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length < SECRET_MIN_BYTES) throw new Error(`must be at least ${SECRET_MIN_BYTES} bytes (UTF-8) long, got ${bytes.length}`);
  return bytes;
}

/**
 * JWT_JWKS_URL: an https URL, or plain http to a loopback host only (a provider's sidecar or a test's);
 * throws an Error saying what is wrong. The keys decide who may call: fetched in clear over a network,
 * anyone on the path could swap in keys of their own and sign any token.
 */
export function jwksUrl(text: string): URL {
  // Shown without a password, and on one line (JSON.stringify) whatever the text holds.
  const shown = JSON.stringify(redactUrl(text.length > 200 ? `${text.slice(0, 200)}…` : text));
  const notHttp = new Error(`must be an https:// URL (or http:// to a loopback host), got ${shown}`);
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw notHttp;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw notHttp;
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new Error(`must be https:// (plain http:// only to a loopback host: 127.0.0.0/8, ::1, localhost), got ${shown}`);
  }
  // fetch refuses a URL with credentials; an identity provider's keys are public anyway.
  if (url.username !== '' || url.password !== '') throw new Error('must not carry a user name or password (the keys are public)');
  return url;
}

/**
 * A `typ` header value as compared (RFC 7515 §4.1.9): lowercased, `application/` left out, since a
 * media type's name is case-insensitive and the prefix is optional there.
 */
export function jwtType(typ: string): string {
  const lower = typ.toLowerCase();
  return lower.startsWith('application/') ? lower.slice('application/'.length) : lower;
}
