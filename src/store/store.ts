import type { Scope } from '../model/scopes.js';
import type { PlantId } from '../model/plant-id.js';
import type { StoredPlant } from '../model/plant.js';
import type { EventStore } from './event-store.js';
import type { IdempotencyStore, KeepAnswer, KeptAnswer } from './idempotency.js';
import type { WebhookStore } from './webhook-store.js';

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
  /** Answers kept for Idempotency-Keys, and the POST writes that keep one (idempotency.ts). */
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
  /**
   * The write batches sent to the database so far and the writes in them (a live view). Writes gather
   * while a batch commits, so many writes per batch over a window means the database is what writes
   * wait for: background work (webhook deliveries) reads it to give way (http/request-pressure.ts).
   */
  readonly writeBatches: Readonly<BatchCounts>;
  /** Resolves when the database answers a trivial query; rejects with StoreUnavailableError otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The orders a list can come in: by id, or by name (ties broken by id), ascending or (`-`) descending. */
export const PLANT_SORTS = ['id', '-id', 'name', '-name'] as const;
export type PlantSort = (typeof PLANT_SORTS)[number];

/** What a list, a count or an export selects: each given filter must hold (AND). */
export interface PlantFilter {
  /**
   * Only plants whose name contains this text, compared under Unicode case folding (model/fold.ts):
   * `FERN` finds "Boston Fern", `é` finds "É". Not empty.
   */
  q?: string | undefined;
  /** Only plants with one of these tags (none given: any tag, or none). */
  tags?: readonly string[] | undefined;
}

/**
 * Where a page starts: after the plant with this sort key, in the list's order (the plant itself need
 * not exist any more). The name is needed for the name orders only.
 */
export interface PageKey {
  id: PlantId;
  name?: string | undefined;
}

export interface ListOptions extends PlantFilter {
  /** At most this many plants (at least 1). */
  limit: number;
  /** The order (default id). */
  sort?: PlantSort | undefined;
  /** Only plants after this key in that order. */
  after?: PageKey | undefined;
}

/** Every plant the filter selects, in this order (default id). */
export interface ExportOptions extends PlantFilter {
  sort?: PlantSort | undefined;
}

export interface PlantChanges {
  name?: string | undefined;
  /** null removes the tag; undefined leaves it as it is. */
  tag?: string | null | undefined;
}

/**
 * A precondition on a plant's current version (If-Match): one of these versions, or `*` (the plant
 * exists). Checked in the same statement or transaction as the write, so a race between writers is
 * settled by the database.
 */
export type IfMatch = '*' | readonly number[];

/**
 * A page of plants, already as JSON: the database writes each plant's JSON text (PostgreSQL also joins
 * them into the page, in one statement; SQLite reads them in order and the store joins them), so no row
 * object is made for a plant only to be serialized again.
 */
export interface PlantPage {
  /**
   * The JSON array of the page's plants, byte for byte what JSON.stringify would make of them: each
   * `{"id":…,"name":…}` with `"tag":…` after the name when the plant has one, ids exact (int64).
   */
  json: string;
  /** How many plants the page holds. */
  count: number;
  /** When more plants (of the filter) follow: the sort key of the last plant on this page, where the next page starts after. */
  next?: { id: PlantId; name: string } | undefined;
}

/** A plant as stored, with its version: a counter, new on every write to it (its ETag). */
export interface VersionedPlant {
  plant: StoredPlant;
  version: number;
}

/** What a put did: created or replaced the plant (its new version), or changed nothing and why. */
export type PutResult =
  | { outcome: 'created' | 'replaced'; version: number }
  /** createOnly, and the plant exists. */
  | { outcome: 'exists' }
  /** ifMatch did not hold. */
  | { outcome: 'precondition-failed' };

/** Why a write aimed at an existing plant changed nothing: there is no such plant, or If-Match did not hold. */
export type WriteRefusal = 'not-found' | 'precondition-failed';

/** What a patch did: the plant as stored now, with its new version, or why it changed nothing. */
export type PatchResult = VersionedPlant | WriteRefusal;

/** What a delete did. */
export type DeleteResult = 'deleted' | WriteRefusal;

/** A write's precondition on the plant's current version. */
export interface ConditionalOptions {
  ifMatch?: IfMatch | undefined;
}

export interface PutOptions extends ConditionalOptions {
  /** Only create: an existing plant is left as it is (If-None-Match: *). */
  createOnly?: boolean | undefined;
}

/**
 * Every plant the filter selects, in the order asked for, from one consistent snapshot, a chunk at a time (iterate once).
 * The snapshot is released when the iteration ends, stops early (break, return) or `close` is called.
 */
export interface PlantExport extends AsyncIterable<StoredPlant[]> {
  /** How many plants the snapshot holds. */
  count(): Promise<number>;
  close(): Promise<void>;
}

/** What an import did; nothing is stored unless every row was valid (see plants/import.ts). */
export interface ImportResult {
  created: number;
  replaced: number;
}

/**
 * A bulk import in progress: rows are staged as they arrive, nothing is visible until `commit`, which
 * stores all of them in one transaction (duplicate ids: the last row wins), or none.
 */
export interface PlantImport {
  add(rows: StoredPlant[]): Promise<void>;
  /** With createOnly, refuses (ImportConflictError) when any id exists already, storing nothing. */
  commit(options: { createOnly: boolean }): Promise<ImportResult>;
  /**
   * `commit`, keeping the answer under an Idempotency-Key (idempotency.ts) in the same transaction: a
   * create-only conflict keeps its answer too, with nothing else stored. When the key has an answer
   * already, nothing is stored and that answer comes back.
   */
  commitKept(options: { createOnly: boolean }, keep: KeepAnswer<'import'>): Promise<KeptAnswer>;
  /** Drops what was staged. Safe to call more than once, and after commit. */
  abort(): Promise<void>;
}

export interface PlantStore {
  get(id: PlantId): Promise<VersionedPlant | undefined>;
  /** A page of plants in the order asked for (default: ascending id), as JSON. */
  page(options: ListOptions): Promise<PlantPage>;
  /** How many plants the filter selects (all of them, without one). */
  count(filter?: PlantFilter): Promise<number>;
  /** Creates or replaces the plant, unless an option says not to. */
  put(plant: StoredPlant, options?: PutOptions): Promise<PutResult>;
  /** Applies the changes to an existing plant. */
  patch(id: PlantId, changes: PlantChanges, options?: ConditionalOptions): Promise<PatchResult>;
  delete(id: PlantId, options?: ConditionalOptions): Promise<DeleteResult>;
  /** Opens a snapshot to export from. */
  export(options: ExportOptions): Promise<PlantExport>;
  startImport(): Promise<PlantImport>;
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
  /** The token with this id, active or revoked. */
  get(id: string): Promise<TokenRecord | undefined>;
  /** Every token, active and revoked, oldest first (ties by id). */
  list(): Promise<TokenRecord[]>;
  /**
   * Revokes the active token with this id or name (the CLI's `token revoke`), or with this id only
   * (`byId`: DELETE /tokens/{id}, where a name equal to another token's id must not match); false when there is none.
   */
  revoke(idOrName: string, options?: { byId?: boolean }): Promise<boolean>;
  /** How many tokens were ever stored, revoked ones included. */
  count(): Promise<number>;
}

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

/** Too many writes are already waiting for the database (WRITE_QUEUE_LIMIT), or exports running: refused at once, not queued. */
export class StoreBusyError extends StoreUnavailableError {
  constructor(limit: number, what: 'writes' | 'exports' = 'writes') {
    super(what === 'writes' ? `${limit} writes are already waiting for the database (WRITE_QUEUE_LIMIT)` : `${limit} exports are already running`);
    this.name = 'StoreBusyError';
  }
}

/** An import with createOnly named ids that exist already; nothing was stored. */
export class ImportConflictError extends Error {
  constructor(readonly existing: PlantId) {
    super(`a plant with id ${existing} exists already (mode=create-only): nothing was imported`);
    this.name = 'ImportConflictError';
  }
}

/** A token name that an active token already has. */
export class DuplicateTokenNameError extends Error {
  constructor(name: string) {
    super(`an active token is already named "${name}"`);
    this.name = 'DuplicateTokenNameError';
  }
}
