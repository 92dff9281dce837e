import { toPlantId, type PlantId } from '../model/plant-id.js';
import type { StoredPlant } from '../model/plant.js';
import type { KeyClaim, Kept } from './idempotency.js';

/**
 * The plants as the store keeps them (Store.plants): lists, counts and exports by filter and order, the
 * writes with their preconditions and what each did, and bulk imports. Free of HTTP, like the rest of
 * the store (store.ts).
 */

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
 * A precondition on a plant's current version (If-None-Match with entity tags): none of these versions
 * (weak comparison: a `W/` tag counts), which a plant that does not exist meets (RFC 9110 §13.1.2).
 * Checked like IfMatch, after it (§13.2.2); never empty. `*` on a put is PutOptions.createOnly.
 */
export type IfNoneMatch = readonly number[];

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
  ifNoneMatch?: IfNoneMatch | undefined;
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

/** An import's outcome: the counts, or (create-only) the first id that existed already, as decimal text: nothing was imported. */
export type ImportOutcome = ImportResult | { conflict: string };

/** A commit's outcome as PlantImport.commit answers it: the counts, or the conflict thrown. */
export function importResult(outcome: ImportOutcome): ImportResult {
  if ('conflict' in outcome) throw new ImportConflictError(toPlantId(outcome.conflict));
  return outcome;
}

/**
 * A bulk import in progress: rows are staged as they arrive, nothing is visible until `commit`, which
 * stores all of them in one transaction (duplicate ids: the last row wins), or none.
 */
export interface PlantImport {
  /**
   * Stages `rows`. The store turns them into what it sends at once and keeps neither them nor the array
   * while it waits: a caller that hands the rows over (plants/import.ts) lets them die young.
   */
  add(rows: StoredPlant[]): Promise<void>;
  /** With createOnly, refuses (ImportConflictError) when any id exists already, storing nothing. */
  commit(options: { createOnly: boolean }): Promise<ImportResult>;
  /**
   * The commit as a write (store/writes.ts): its outcome, a create-only conflict answered rather than
   * thrown. Under a claim on an Idempotency-Key, the outcome is kept with it in the commit's transaction;
   * or the key's earlier outcome comes back instead and nothing is committed (`abort` drops the rows).
   */
  settle(createOnly: boolean): Promise<ImportOutcome>;
  settle(createOnly: boolean, claim: KeyClaim): Promise<Kept<'import', ImportOutcome>>;
  settle(createOnly: boolean, claim?: KeyClaim): Promise<ImportOutcome | Kept<'import', ImportOutcome>>;
  /** Drops what was staged. Safe to call more than once, and after commit. */
  abort(): Promise<void>;
}

export interface PlantStore {
  get(id: PlantId): Promise<VersionedPlant | undefined>;
  /**
   * The plants with these ids, read together (one snapshot): each answer in the place of its id, undefined
   * for an id no plant has; an id given twice is answered twice.
   */
  getMany(ids: readonly PlantId[]): Promise<Array<VersionedPlant | undefined>>;
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

/** An import with createOnly named ids that exist already; nothing was stored. */
export class ImportConflictError extends Error {
  constructor(readonly existing: PlantId) {
    super(`a plant with id ${existing} exists already (mode=create-only): nothing was imported`);
    this.name = 'ImportConflictError';
  }
}
