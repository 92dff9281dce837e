import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { NewToken, TokenRecord, TokenStore } from '../store/store.js';
import { looksLikeJwt, type JwtVerifier } from './jwt.js';
import type { Principal } from '../model/principal.js';
import { SCOPES, type Scope } from '../model/scopes.js';

/**
 * Bearer tokens. A token is a long random secret, so a fast hash (SHA-256) is as safe to store as a
 * slow password hash and costs microseconds per request instead of milliseconds. Only the hash is
 * ever stored; the secret is shown once, when it is made.
 */

export function hashToken(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/** A new secret: 32 random bytes, base64url, with a prefix that secret scanners can spot. */
export function generateSecret(): string {
  return `ps_${randomBytes(32).toString('base64url')}`;
}

export function generateTokenId(): string {
  return randomBytes(6).toString('hex');
}

/** A new token to store, and its secret (shown once, never stored). */
export function newToken(name: string, scopes: readonly Scope[]): { secret: string; token: NewToken } {
  const secret = generateSecret();
  return { secret, token: { id: generateTokenId(), name, hash: hashToken(secret), scopes: [...scopes] } };
}

export async function createToken(tokens: TokenStore, name: string, scopes: readonly Scope[]): Promise<{ secret: string; record: TokenRecord }> {
  const { secret, token } = newToken(name, scopes);
  return { secret, record: await tokens.create(token) };
}

/** What a token is found to be: whose it is, or why it is refused (a message for the client, never the token). */
export type Verdict = Principal | string;

const UNKNOWN_TOKEN = 'unknown or revoked bearer token';

/** How long a stored token found valid is trusted without asking the store again: a revocation takes effect within it. */
export const TOKEN_CACHE_MS = 500;
const CACHE_MAX = 10_000;

/**
 * Finds who a bearer token belongs to: a static token from the configuration, a JWT (when one is
 * configured: only a token shaped like a JWT goes there, so the identity provider never slows the
 * other tokens), or a stored one. Tokens found valid are cached by their secret (static ones for good,
 * stored ones for TOKEN_CACHE_MS, JWTs for JWT_CACHE_MS but never past their expiry), so a busy client
 * costs one map lookup per request instead of a SHA-256 or a signature check, and a store lookup at most
 * every TOKEN_CACHE_MS; unknown tokens are never cached, so a token created after start works at once.
 */
export class TokenVerifier {
  private readonly staticHashes: Buffer[];
  /** Each static token's principal: its own id, so that what is kept per token (Idempotency-Keys, rate limits) is its own. */
  private readonly staticPrincipals: Principal[];
  private readonly cache = new Map<string, { principal: Principal; until: number }>();
  /** Counts the forget() calls: a store look-up that began before one answers its request but is not cached (it may predate the revocation). */
  private forgets = 0;

  constructor(
    staticTokens: readonly string[],
    private readonly store: TokenStore,
    private readonly jwt?: JwtVerifier,
  ) {
    this.staticHashes = staticTokens.map(hashToken);
    // `static:` and the first 48 bits of its hash: stable across restarts and orders, telling nothing of the secret.
    this.staticPrincipals = this.staticHashes.map((hash) => ({
      tokenId: `static:${hash.subarray(0, 6).toString('hex')}`,
      scopes: SCOPES,
      source: 'static',
    }));
  }

  /** The principal, or why the token is refused. Synchronous when the answer is known without the store or a JWT check. */
  verify(secret: string): Verdict | Promise<Verdict> {
    const cached = this.cache.get(secret);
    if (cached !== undefined && cached.until > Date.now()) return cached.principal;
    const hash = hashToken(secret);
    let found: Principal | undefined;
    // Compare against every static hash, in constant time, whatever matches.
    this.staticHashes.forEach((known, i) => {
      if (timingSafeEqual(known, hash)) found = this.staticPrincipals[i];
    });
    if (found !== undefined) {
      this.remember(secret, found, Infinity);
      return found;
    }
    if (this.jwt !== undefined && looksLikeJwt(secret)) {
      return this.jwt.verify(secret).then((verified) => {
        if (typeof verified === 'string') return verified;
        this.remember(secret, verified.principal, verified.until);
        return verified.principal;
      });
    }
    const forgets = this.forgets;
    return this.store.findActiveByHash(hash).then((record) => {
      if (!record || !timingSafeEqual(record.hash, hash)) {
        this.cache.delete(secret);
        return UNKNOWN_TOKEN;
      }
      const principal: Principal = { tokenId: record.id, scopes: record.scopes, source: 'stored' };
      if (forgets === this.forgets) this.remember(secret, principal, Date.now() + TOKEN_CACHE_MS);
      return principal;
    });
  }

  /**
   * Forgets the cached look-ups of a stored token, revoked by this process or another worker of the
   * instance: its next request asks the store (and is refused) at once, rather than within TOKEN_CACHE_MS.
   * Revocation is rare; the cache is bounded.
   */
  forget(tokenId: string): void {
    this.forgets++;
    for (const [secret, { principal }] of this.cache) if (principal.tokenId === tokenId) this.cache.delete(secret);
  }

  private remember(secret: string, principal: Principal, until: number): void {
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(secret, { principal, until });
  }
}
