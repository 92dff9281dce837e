import type { Scope } from './scopes.js';

/** Who a request speaks for, once its bearer token is verified: a stored token, a static one, or a JWT's subject. */
export interface Principal {
  /** The stored token's id, `static:<the start of its hash>` for a token from PLANT_STORE_TOKENS, or `jwt:<iss>:<sub>` for a JWT. */
  tokenId: string;
  scopes: readonly Scope[];
}
