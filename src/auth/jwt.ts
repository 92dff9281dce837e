import { createHash } from 'node:crypto';
import {
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  type JWTVerifyResult,
  type KeyInput,
} from 'jose';
import type { Config } from '../config/config.js';
import { AUTH_SETTINGS } from '../config/auth.js';
import { KeyNotForAlgorithm, RemoteKeySet } from './jwks.js';
import { JWKS_ALGORITHMS, jwksUrl, jwtType, publicKeyAlgorithms, publicKeyFromPem, SECRET_ALGORITHMS, secretKey } from '../config/jwt-keys.js';
import { SCOPES, type Scope } from '../model/scopes.js';
import type { Principal } from '../model/principal.js';

/**
 * JWTs from an identity provider, accepted besides the store's own tokens when JWT_JWKS_URL,
 * JWT_PUBLIC_KEY or JWT_SECRET is set: signature (by an allow-listed algorithm fitting the key), issuer,
 * audience, `exp` (required) and `nbf` are checked; the scopes come from the `scope` or `scp` claim.
 */

/** Clock skew allowed between the identity provider and this service, for `exp` and `nbf`. */
export const JWT_LEEWAY_S = 30;
/** The keys of a JWKS a token without `kid` is tried with, of those of its type (a rotation publishes two or three). */
const MAX_CANDIDATE_KEYS = 5;
/** The longest claim kept whole in a principal's id, in UTF-8 bytes: with the issuer and a 255-character Idempotency-Key, well within a B-tree entry. */
const MAX_ID_PART_BYTES = 1024;
/** A verified JWT is trusted without verifying it again for at most this long, and never past its `exp` plus the leeway. */
export const JWT_CACHE_MS = 30_000;

export type JwtSettings = Pick<Config, 'jwtJwksUrl' | 'jwtPublicKey' | 'jwtSecret' | 'jwtIssuer' | 'jwtAudience'> & Partial<Pick<Config, 'jwtTypes'>>;

/** JWT_TYPES' default, for settings that leave it out. */
const DEFAULT_TYPES = AUTH_SETTINGS.jwtTypes.schema.default as string[];

/**
 * The `typ` headers accepted (RFC 8725 §3.11: a JWT of another kind, a security event or a logout token
 * signed by the same provider, must not pass as an access token). `absent` accepts a token without one.
 */
function typeCheck(types: readonly string[]): (typ: unknown) => boolean {
  const accepted = new Set(types);
  return (typ) => (typ === undefined ? accepted.has('absent') : typeof typ === 'string' && typ !== '' && accepted.has(jwtType(typ)));
}

/** Three base64url segments (the last empty for an unsigned token, which is then refused): only these go to JWT verification. */
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/;

export function looksLikeJwt(token: string): boolean {
  return JWT_SHAPE.test(token);
}

/** A verified token: who it is, and until when (epoch ms) that answer may be reused. */
export interface VerifiedJwt {
  principal: Principal;
  until: number;
}

/**
 * Why a JWT is refused, said to the client (401 invalid_token). ASCII without quotes: it also goes into
 * WWW-Authenticate (an algorithm named is one of the accepted ones: jose refuses any other before it looks
 * for a key). A claim is said to fail its check only when it was there and of its type: jose's `reason`
 * says `missing`, `invalid` (not a number, say) or `check_failed`.
 */
function refusal(error: unknown, token: string): string {
  if (error instanceof errors.JWTExpired) return 'the JWT has expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === 'missing') return `the JWT has no ${error.claim} claim`;
    if (error.reason === 'check_failed' && error.claim === 'iss') return 'the JWT is from another issuer';
    if (error.reason === 'check_failed' && error.claim === 'aud') return 'the JWT is for another audience';
    if (error.reason === 'check_failed' && error.claim === 'nbf') return 'the JWT is not valid yet';
    return `the JWT's ${error.claim} claim is not valid`;
  }
  // jose says JOSENotSupported for a critical header parameter (crit) it does not know, as for an algorithm.
  if (error instanceof errors.JOSENotSupported && criticalHeader(token))
    return 'the JWT has a critical header parameter (crit) this service does not support';
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) return "the JWT's algorithm is not accepted";
  if (error instanceof errors.JWSSignatureVerificationFailed) return "the JWT's signature does not verify";
  if (error instanceof KeyNotForAlgorithm) return `the key the JWT names (kid) is not published for its algorithm, ${error.alg}`;
  if (error instanceof errors.JWKSNoMatchingKey) return "no key of the identity provider matches the JWT's key id";
  return 'the JWT is malformed';
}

/** Whether the token's protected header has `crit` (read only for a refusal). */
function criticalHeader(token: string): boolean {
  try {
    return decodeProtectedHeader(token).crit !== undefined;
  } catch {
    return false;
  }
}

/**
 * The scopes a token grants, from `scope` and `scp`; names this service does not know are ignored (an
 * identity provider grants `openid`, `profile`…), but said: such a token grants more than this service's
 * scopes (`foreign`). `scope` is a space-separated string (RFC 8693 §4.2, as RFC 9068's access tokens carry
 * it: Auth0, Keycloak); it is taken as an array of names too, since Spring Authorization Server writes it
 * so. `scp` is an array (Okta, ORY) or space-separated (Microsoft Entra ID). A claim of any other shape (a
 * number, an object, an array holding something other than one name per item) is not a grant of fewer
 * scopes but a token this service cannot read: refused, with these words.
 */
function scopesOf(payload: JWTPayload): { scopes: Scope[]; foreign: boolean } | string {
  const names = new Set<string>();
  for (const claim of ['scope', 'scp'] as const) {
    const value = payload[claim];
    if (value === undefined) continue;
    // Names are separated by spaces (RFC 6749 §3.3): other whitespace (a tab, a line break) would be taken
    // as part of a name, and the scope silently dropped, so it is refused, as in the array form.
    if (typeof value === 'string' && !/[^\S ]/.test(value)) {
      for (const name of value.split(' ')) if (name !== '') names.add(name);
    } else if (Array.isArray(value) && value.every((name) => typeof name === 'string' && name !== '' && !/\s/.test(name)))
      for (const name of value as string[]) names.add(name);
    else return `the JWT's ${claim} claim is not valid: scope names, space-separated or an array of them`;
  }
  const scopes = SCOPES.filter((scope) => names.has(scope));
  return { scopes, foreign: names.size > scopes.length };
}

/**
 * A claim's text as a part of an id: `%` and `:` escaped (as in a URL), so that no claim can end its part
 * early. A part longer than MAX_ID_PART_BYTES is its SHA-256 instead (`sha256:` and the base64url digest,
 * stable across renewals as the id must be; the `:` no escaped claim holds): the id keys PostgreSQL's
 * B-tree indexes (rate_limits, idempotency_keys), whose entries may not pass 2704 bytes, and a claim can be
 * as long as a header. Shorter ones stay as they are, as rows kept by earlier releases name them.
 */
function idPart(text: string): string {
  const part = text.replace(/%/g, '%25').replace(/:/g, '%3A');
  if (part.length * 3 <= MAX_ID_PART_BYTES || Buffer.byteLength(part) <= MAX_ID_PART_BYTES) return part;
  return `sha256:${createHash('sha256').update(text).digest('base64url')}`;
}

const nonEmpty = (claim: unknown): claim is string => typeof claim === 'string' && claim !== '';

/**
 * Who the token speaks for, stable across its renewals (what is kept per principal is kept by it:
 * Idempotency-Key answers, rate limits, stream caps): `jwt:<iss>:sub:<sub>` for a user (a subject),
 * `jwt:<iss>:client:<client_id, else azp>` for a client with no subject, failing both
 * `jwt:<iss>:token:<the start of the token's SHA-256>`. The kinds stay apart, so a client named "svc" is
 * never the user "svc"; `%` and `:` in the issuer and the name are escaped, so no claim can spell
 * another principal's id.
 */
function tokenIdOf(payload: JWTPayload, token: string): string {
  const issuer = `jwt:${idPart(String(payload.iss))}`;
  if (nonEmpty(payload.sub)) return `${issuer}:sub:${idPart(payload.sub)}`;
  const client = [payload.client_id, payload.azp].find(nonEmpty);
  if (client !== undefined) return `${issuer}:client:${idPart(client)}`;
  return `${issuer}:token:${createHash('sha256').update(token).digest('base64url').slice(0, 16)}`;
}

export class JwtVerifier {
  private readonly typeAccepted: (typ: unknown) => boolean;

  constructor(
    private readonly key: KeyInput | JWTVerifyGetKey,
    private readonly algorithms: string[],
    private readonly claims: { issuer: string; audience: string; types: readonly string[] },
    private readonly keySet?: RemoteKeySet,
    private readonly now: () => number = Date.now,
  ) {
    this.typeAccepted = typeCheck(claims.types);
  }

  /** The verifier the settings ask for, or undefined when no JWT key is configured. `onKeyFetchFailure` hears why a JWKS fetch failed. */
  static fromConfig(settings: JwtSettings, onKeyFetchFailure: (reason: string) => void, now: () => number = Date.now): JwtVerifier | undefined {
    const claims = { issuer: settings.jwtIssuer, audience: settings.jwtAudience, types: settings.jwtTypes ?? DEFAULT_TYPES };
    if (settings.jwtJwksUrl !== '') {
      const keySet = new RemoteKeySet(jwksUrl(settings.jwtJwksUrl), onKeyFetchFailure, now);
      return new JwtVerifier(keySet.getKey, JWKS_ALGORITHMS, claims, keySet, now);
    }
    if (settings.jwtPublicKey !== '') {
      const key = publicKeyFromPem(settings.jwtPublicKey);
      return new JwtVerifier(key, publicKeyAlgorithms(key), claims, undefined, now);
    }
    if (settings.jwtSecret !== '') return new JwtVerifier(secretKey(settings.jwtSecret), SECRET_ALGORITHMS, claims, undefined, now);
    return undefined;
  }

  /** The verified token, or why it is refused. Rejects (503) only when the identity provider's keys cannot be had. */
  async verify(token: string): Promise<VerifiedJwt | string> {
    let payload: JWTPayload;
    try {
      let typ: unknown;
      ({
        payload,
        protectedHeader: { typ },
      } = await this.verified(token));
      if (!this.typeAccepted(typ)) return "the JWT's type (typ) is not accepted";
    } catch (error) {
      if (error instanceof errors.JOSEError) return refusal(error, token);
      throw error;
    }
    const expiresAt = (payload.exp! + JWT_LEEWAY_S) * 1000;
    const until = Math.min(expiresAt, this.now() + JWT_CACHE_MS);
    const granted = scopesOf(payload);
    if (typeof granted === 'string') return granted;
    const { scopes, foreign } = granted;
    // Verified, aud is this audience or a list holding it: another one in the list is a service it is good for too.
    const otherAudience = Array.isArray(payload.aud) && payload.aud.some((audience) => audience !== this.claims.audience);
    const principal: Principal = { tokenId: tokenIdOf(payload, token), scopes, source: 'jwt', expiresAt };
    if (foreign || otherAudience) principal.grantsElsewhere = true;
    return { principal, until };
  }

  /**
   * jose's verification. A token without `kid` matches every key of its type in a JWKS: with two of them
   * (a provider's rotation overlap) jose throws JWKSMultipleMatchingKeys, which yields the candidates, and
   * each is tried in turn, as jose documents; at most MAX_CANDIDATE_KEYS, so that a large key set cannot
   * make one request cost many signature checks.
   */
  private async verified(token: string): Promise<JWTVerifyResult> {
    const options: JWTVerifyOptions = {
      algorithms: this.algorithms,
      issuer: this.claims.issuer,
      audience: this.claims.audience,
      // A token that never expires could never be taken back: exp is required.
      requiredClaims: ['exp'],
      clockTolerance: JWT_LEEWAY_S,
      currentDate: new Date(this.now()),
    };
    try {
      return await jwtVerify(token, this.key, options);
    } catch (error) {
      if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
      let tried = 0;
      for await (const key of error) {
        try {
          return await jwtVerify(token, key, options);
        } catch (keyError) {
          if (!(keyError instanceof errors.JWSSignatureVerificationFailed)) throw keyError;
        }
        if (++tried === MAX_CANDIDATE_KEYS) break;
      }
      throw new errors.JWSSignatureVerificationFailed();
    }
  }

  /** Fetches a JWKS ahead of the first token (nothing to do for a configured key). */
  warmUp(): void {
    this.keySet?.warmUp();
  }

  close(): void {
    this.keySet?.close();
  }
}
