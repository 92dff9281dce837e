import type { EventStore } from './event-store.js';
import type { IdempotencyStore } from './idempotency.js';
import type { Migrated } from './migration.js';
import type { PlantStore } from './plant-store.js';
import type { TokenStore } from './token-store.js';
import type { WebhookStore } from './webhook-store.js';
import type { WriteStore } from './writes.js';

/**
 * The store: everything the service keeps, behind one small interface with one implementation per
 * database (sqlite/store.ts, postgres/store.ts). It knows nothing of HTTP. Every write it acknowledges (a resolved
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
  /** The change feed: one event per plant change, recorded in its transaction, read in commit order. */
  readonly events: EventStore;
  /** The index of names that q is found through. */
  readonly searchIndex: SearchIndex;
  /**
   * The writes a request makes, as values (writes.ts): one entry, with a claim on an Idempotency-Key or
   * without one, each answering its outcome.
   */
  readonly writes: WriteStore;
  /** Idempotency-Keys: the outcomes kept under them (idempotency.ts), found, counted and swept. */
  readonly idempotency: IdempotencyStore;
  /**
   * Rate-limit counts shared by every instance on this database, where the database serves several
   * instances (PostgreSQL). Absent: the service counts in its own memory.
   */
  readonly rateCounter?: RateCounter;
  /**
   * What the operator should know about this database, found when the store opened: each is logged once
   * as a warning at start (say, a search index that could not be made for want of an extension).
   */
  readonly warnings: readonly string[];
  /** What opening it did to its schema: made it (a new store), or the migrations it applied (`plant-store migrate` and the server's log say which). */
  readonly migrated: Migrated;
  /**
   * The write batches sent to the database so far and the writes in them (a live view): how writes are
   * grouped, since those that gather while a batch commits go in the next one (group commit; the contract
   * suite holds it). Where the database is a server of its own, many writes a batch means it is what writes
   * wait for: webhook deliveries then give way (http/request-pressure.ts).
   */
  readonly writeBatches: Readonly<BatchCounts>;
  /**
   * Resolves when the database answers a trivial query and is not known to refuse writes; rejects with
   * StoreUnavailableError otherwise (/readyz).
   */
  ping(): Promise<void>;
  /**
   * Calls `listener` when the store turns unable to take writes (with the error, which its refused writes
   * carry as `reported`) and when it takes them again (undefined): once per change, not per refused write
   * (SQLite: a full disk, its file deleted). Absent: the store says nothing of its own.
   */
  onHealthChange?(listener: (problem: StoreUnavailableError | undefined) => void): void;
  close(): Promise<void>;
}

// The plant store's and the token store's words, declared in plant-store.ts and token-store.ts (where
// store/writes.ts can import them without a circle through this file), reach the rest of the service
// from here, with the Store they belong to.
export { ImportConflictError, PLANT_SORTS } from './plant-store.js';
export { DuplicateTokenNameError } from './token-store.js';
export type { NewToken, TokenRecord, TokenStore } from './token-store.js';
export type {
  ConditionalOptions,
  DeleteResult,
  ExportOptions,
  IfMatch,
  IfNoneMatch,
  ImportResult,
  ListOptions,
  PageKey,
  PatchResult,
  PlantChanges,
  PlantExport,
  PlantFilter,
  PlantImport,
  PlantPage,
  PlantSort,
  PlantStore,
  PutOptions,
  PutResult,
  VersionedPlant,
  WriteRefusal,
} from './plant-store.js';

/** Batches sent to the database and the items in them, since the store opened. */
export interface BatchCounts {
  batches: number;
  items: number;
}

/**
 * Told of every batch the group commit committed (every write on SQLite, plant writes on PostgreSQL), once
 * it has committed: how many writes it held and how long it took, in seconds, from the moment the writes
 * were sent to the database until its answer came back (what the requests waiting on it feel). Metrics
 * observe it; it must be cheap and not throw.
 */
export type CommitObserver = (batchSize: number, seconds: number) => void;

/**
 * The index of names that searches (q) read. Where it is derived data, kept after the writes rather than
 * in their transactions (SQLite), it may be a little behind them; searches are exact all the same, since
 * they also read what it has not indexed yet.
 */
export interface SearchIndex {
  /** How far the index is behind the committed writes: the changes not indexed yet, and how long ago the oldest committed (ms). */
  lag(): Promise<{ events: number; ms: number }>;
  /** Empties the index and makes it anew from the stored plants; answers how many plants it holds. */
  rebuild(): Promise<number>;
  /**
   * Calls `listener` with why, when the index could not be brought up to date after the writes (tried
   * again a second later; told once until it succeeds). Searches stay exact meanwhile.
   */
  onFailure(listener: (message: string) => void): void;
}

/** Requests counted per key and fixed window (the window's number: epoch milliseconds / window length). */
export interface RateCounter {
  /** Counts one request and answers the key's count in the window, this one included. */
  hit(key: string, window: number): Promise<number>;
}

/** The database cannot be reached or cannot write (down, disk full, read-only, timed out). */
export class StoreUnavailableError extends Error {
  /**
   * The store told its onHealthChange listeners of this outage as it began (the app logs it then, once):
   * a request refused by it need not log it again.
   */
  readonly reported: boolean;

  constructor(message: string, options?: { cause?: unknown; reported?: boolean }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
    this.reported = options?.reported === true;
  }
}

/** Too many writes are already waiting for the database (WRITE_QUEUE_LIMIT), or exports running: refused at once, not queued. */
export class StoreBusyError extends StoreUnavailableError {
  constructor(limit: number, what: 'writes' | 'exports' = 'writes') {
    super(what === 'writes' ? `${limit} writes are already waiting for the database (WRITE_QUEUE_LIMIT)` : `${limit} exports are already running`);
    this.name = 'StoreBusyError';
  }
}
