import type { Scope } from './scopes.js';

/** Who a request speaks for, once its bearer token is verified: a stored token, a static one, or a JWT's subject. */
export interface Principal {
  /** The stored token's id, `static:<the start of its hash>` for a token from PLANT_STORE_TOKENS, or `jwt:<iss>:<sub>` for a JWT. */
  tokenId: string;
  scopes: readonly Scope[];
  /**
   * Where the token comes from, which says how it can stop being valid: a static one never does (it is
   * configuration), a stored one when it is revoked, a JWT when it expires.
   */
  source: 'static' | 'stored' | 'jwt';
  /** A JWT's: when it is no longer accepted (its `exp` plus the clock skew allowed), in epoch milliseconds. */
  expiresAt?: number;
}
