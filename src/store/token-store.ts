import type { Scope } from '../model/scopes.js';

/** The bearer tokens as the store keeps them (Store.tokens): by the SHA-256 hash of their secret, never the secret. */

/** A token to store: its id, its name, the hash of its secret and its scopes. */
export interface NewToken {
  id: string;
  name: string;
  hash: Buffer;
  scopes: Scope[];
}

export interface TokenRecord {
  id: string;
  name: string;
  scopes: Scope[];
  createdAt: string;
  revokedAt: string | null;
}

export interface TokenStore {
  /** Stores a token by the SHA-256 hash of its secret; the secret itself is never stored. */
  create(token: NewToken): Promise<TokenRecord>;
  /** The active (not revoked) token with this hash. */
  findActiveByHash(hash: Buffer): Promise<(TokenRecord & { hash: Buffer }) | undefined>;
  /** The token with this id, active or revoked. */
  get(id: string): Promise<TokenRecord | undefined>;
  /** Every token, active and revoked, oldest first (ties by id). */
  list(): Promise<TokenRecord[]>;
  /**
   * Revokes the active token with this id, else the active token with this name (the CLI's `token revoke`:
   * one token, never a second whose name is the first's id, as `token revoke --url` picks), or with this id only
   * (`byId`: DELETE /tokens/{id}, where a name equal to another token's id must not match); false when there is none.
   */
  revoke(idOrName: string, options?: { byId?: boolean }): Promise<boolean>;
  /** How many tokens were ever stored, revoked ones included. */
  count(): Promise<number>;
}

/** A token name that an active token already has. */
export class DuplicateTokenNameError extends Error {
  constructor(name: string) {
    super(`an active token is already named "${name}"`);
    this.name = 'DuplicateTokenNameError';
  }
}
