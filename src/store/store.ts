import type { Scope } from '../auth/scopes.js';
import type { PlantId } from '../plants/id.js';
import type { StoredPlant } from '../plants/schema.js';
import type { WebhookStore } from './webhook-store.js';

/**
 * The store: everything the service keeps, behind one small interface with one implementation per
 * database (sqlite.ts, postgres.ts). It knows nothing of HTTP. Every write it acknowledges (a resolved
 * promise) is committed to durable storage.
 */
export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  readonly plants: PlantStore;
  readonly tokens: TokenStore;
  /**
   * Webhook endpoints and the outbox. Every plant write (put, patch, delete) that changes a plant queues,
   * in its own transaction, one message per endpoint subscribed to its event: a committed change has its
   * messages, and a change that did not commit has none.
   */
  readonly webhooks: WebhookStore;
  /**
   * Rate-limit counts shared by every instance on this database, where the database serves several
   * instances (PostgreSQL). Absent: the service counts in its own memory.
   */
  readonly rateCounter?: RateCounter;
  /** Resolves when the database answers a trivial query; rejects with StoreUnavailableError otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export type Plant = StoredPlant;

export interface ListOptions {
  limit: number;
  /** Only plants whose id is greater than this one. */
  after?: PlantId | undefined;
  tag?: string | undefined;
}

export interface PlantChanges {
  name?: string | undefined;
  /** null removes the tag; undefined leaves it as it is. */
  tag?: string | null | undefined;
}

/** What a put did: created the plant, replaced an existing one, or (create-only) found one and changed nothing. */
export type PutOutcome = 'created' | 'replaced' | 'exists';

export interface PlantStore {
  get(id: PlantId): Promise<Plant | undefined>;
  /** Plants in ascending id order. */
  list(options: ListOptions): Promise<Plant[]>;
  /** Creates or replaces the plant; with createOnly an existing plant is left as it is. */
  put(plant: Plant, options?: { createOnly?: boolean }): Promise<PutOutcome>;
  /** Applies the changes to an existing plant; undefined when there is none. */
  patch(id: PlantId, changes: PlantChanges): Promise<Plant | undefined>;
  /** False when there was no such plant. */
  delete(id: PlantId): Promise<boolean>;
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
  create(token: { id: string; name: string; hash: Buffer; scopes: Scope[] }): Promise<TokenRecord>;
  /** The active (not revoked) token with this hash. */
  findActiveByHash(hash: Buffer): Promise<(TokenRecord & { hash: Buffer }) | undefined>;
  list(): Promise<TokenRecord[]>;
  /** Revokes the active token with this id or name; false when there is none. */
  revoke(idOrName: string): Promise<boolean>;
  /** How many tokens were ever stored, revoked ones included. */
  count(): Promise<number>;
}

/** Requests counted per key and fixed window (the window's number: epoch milliseconds / window length). */
export interface RateCounter {
  /** Counts one request and answers the key's count in the window, this one included. */
  hit(key: string, window: number): Promise<number>;
  /** The key's count in the window, without counting. */
  peek(key: string, window: number): Promise<number>;
}

/** The database cannot be reached or cannot write (down, disk full, read-only, timed out). */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** Too many writes are already waiting for the database (WRITE_QUEUE_LIMIT): refused at once, not queued. */
export class StoreBusyError extends StoreUnavailableError {
  constructor(limit: number) {
    super(`${limit} writes are already waiting for the database (WRITE_QUEUE_LIMIT)`);
    this.name = 'StoreBusyError';
  }
}

/** A token name that an active token already has. */
export class DuplicateTokenNameError extends Error {
  constructor(name: string) {
    super(`an active token is already named "${name}"`);
    this.name = 'DuplicateTokenNameError';
  }
}
