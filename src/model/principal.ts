import type { Scope } from './scopes.js';

/** Who a request speaks for, once its bearer token is verified: a stored token, a static one, or a JWT's subject. */
export interface Principal {
  /**
   * Whom the token speaks for, the key of everything kept per principal (Idempotency-Key answers, rate
   * limits, stream caps): a stored token's id (hex digits), `static:<the start of its hash>` for a token
   * from PLANT_STORE_TOKENS, or for a JWT `jwt:<iss>:sub:<sub>`, `jwt:<iss>:client:<client_id or azp>`
   * (a client's token without a subject) or `jwt:<iss>:token:<the start of its hash>` (neither), with `%`
   * and `:` escaped in the claims (`%25`, `%3A`) so that no claim can spell another's id, and a claim over
   * 1 KiB its SHA-256 (`sha256:…`), so that the id fits PostgreSQL's index entries (auth/jwt.ts).
   */
  tokenId: string;
  scopes: readonly Scope[];
  /**
   * Where the token comes from, which says how it can stop being valid: a static one never does (it is
   * configuration), a stored one when it is revoked, a JWT when it expires.
   */
  source: 'static' | 'stored' | 'jwt';
  /** A JWT's: when it is no longer accepted (its `exp` plus the clock skew allowed), in epoch milliseconds. */
  expiresAt?: number;
  /**
   * A JWT's, set when its claims as sent grant more than this service's scopes: a scope this service does
   * not know (`openid`, another API's) or an audience besides this one. Such a token is never taken in a
   * URL, where a leaked one would work at those other services (http/auth.ts).
   */
  grantsElsewhere?: true;
}
