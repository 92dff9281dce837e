import { toPlantId, type PlantId } from '../../model/plant-id.js';
import {
  type ConditionalOptions,
  type DeleteResult,
  type ExportOptions,
  type ListOptions,
  type PatchResult,
  type PlantChanges,
  type PlantExport,
  type PlantFilter,
  type PlantImport,
  type PlantPage,
  type PlantStore,
  type PutOptions,
  type PutResult,
  type VersionedPlant,
} from '../store.js';
import type { StoredPlant } from '../../model/plant.js';
import { prepare, type Connection } from './connection.js';
import { translate } from './errors.js';
import type { ExportConnections } from './exports.js';
import { toPlant, type PlantRow } from '../rows.js';
import { CANDIDATES_SQL, COMMON_Q, MATCH_IDS_SQL, pageOfMatchesSql, sortsMatches } from './name-order-q.js';
import { searchWalk } from '../search-walk.js';
import { countSql, filterParams, listParams, pageSql, RECENT_SQL, SCAN_WINDOW, scanEndSql, type ListShape, type PageRow } from './list-sql.js';
import { TurnReads } from './gathered-reads.js';
import { sqliteImport } from './imports.js';
import type { WriteThread } from './writer/thread.js';
import type { WriteOf } from './writer/protocol.js';
import type { BatchTracer } from '../batcher.js';

/** A plant by id, with its version (also the read prototype's, bench/read-prototype.ts). */
export const GET_SQL = 'SELECT id, name, tag, version FROM plants WHERE id = ?';

/** A put as the writer thread makes it (a request's too, with an Idempotency-Key or without: sqlite/writes.ts). */
export function putOp(plant: StoredPlant, options: PutOptions): WriteOf<'put'> {
  return {
    kind: 'put',
    id: plant.id,
    name: plant.name,
    tag: plant.tag ?? null,
    createOnly: options.createOnly === true,
    ifMatch: options.ifMatch,
    ifNoneMatch: options.ifNoneMatch,
  };
}

/**
 * Plants on SQLite: reads on the main thread's connection (those of one turn run together), every write
 * through the writer thread (writer/), exports on connections of their own (exports.ts).
 */
export class SqlitePlants implements PlantStore {
  private readonly getStmt;
  /** Reads by id in one read transaction (a savepoint within the turn's, when it has others). */
  private readonly readMany: (ids: readonly PlantId[]) => Array<VersionedPlant | undefined>;
  /** Reads by id and pages: those asked in one turn run together at its end (gathered-reads.ts). */
  private readonly reads: TurnReads;

  constructor(
    private readonly db: Connection,
    private readonly writer: WriteThread,
    private readonly exports: ExportConnections,
    tracer?: BatchTracer,
    /** SCAN_WINDOW (list-sql.ts); smaller in tests. */
    private readonly scanWindow = SCAN_WINDOW,
  ) {
    // A deferred transaction that only reads: one snapshot, one WAL-index lock, for a turn's reads.
    const oneSnapshot = db.transaction((reads: () => void) => reads());
    this.reads = new TurnReads(translate, (reads) => oneSnapshot(reads), tracer);
    this.getStmt = prepare<[PlantId], PlantRow<bigint> & { version: bigint }>(db, GET_SQL).safeIntegers(true);
    this.readMany = db.transaction((ids: readonly PlantId[]) => ids.map((id) => this.read(id)));
  }

  get(id: PlantId): Promise<VersionedPlant | undefined> {
    return this.reads.run(() => this.read(id));
  }

  /** By primary key, one after the other in one read transaction: one snapshot. */
  getMany(ids: readonly PlantId[]): Promise<Array<VersionedPlant | undefined>> {
    return this.reads.run(() => this.readMany(ids));
  }

  private read(id: PlantId): VersionedPlant | undefined {
    const row = this.getStmt.get(id);
    return row && { plant: toPlant(row), version: Number(row.version) };
  }

  /** One statement per shape of request (list-sql.ts), prepared at its first use and kept. */
  page({ limit, ...options }: ListOptions): Promise<PlantPage> {
    return this.reads.run(() => {
      const { rows, shape, params } = this.pageRows(options, limit + 1);
      const count = Math.min(limit, rows.length);
      let json = '[';
      for (let i = 0; i < count; i++) json += i === 0 ? rows[i]![0] : `,${rows[i]![0]}`;
      const last = rows[count - 1];
      // A scan whose window ended before the page was full: the next page goes on after the last plant examined.
      const scanned = rows.length <= limit && shape.q === 'scan' ? this.scanEnd(shape, params) : undefined;
      return {
        json: `${json}]`,
        count,
        next: rows.length > limit && last !== undefined ? { id: toPlantId(last[1]), name: last[2] } : scanned,
      };
    });
  }

  /**
   * A page's rows (`take`: one more than it holds), with the shape and parameters that found them. q in a
   * name order through the trigram index: first the start of the order, walked (searchWalk), which is the
   * page when it holds one; else the index's matches, sorted, or the order walked on when COMMON_Q names
   * or more hold q (matchesInNameOrder), as they would have been without the walk.
   */
  private pageRows(options: Omit<ListOptions, 'limit'>, take: number): { rows: PageRow[]; shape: ListShape; params: Record<string, unknown> } {
    const recent = this.recent(options);
    const window = this.scanWindow;
    const found = listParams(options, take, { recent, window });
    if (sortsMatches(found.shape)) {
      const walk = listParams(options, take, { walk: true, recent, window: Math.min(window, searchWalk(take)) });
      const walked = this.rows(pageSql(walk.shape), walk.params);
      if (walked.length === take) return { rows: walked, ...walk };
      const plan = this.matchesInNameOrder(found.shape, found.params);
      if (plan === 'common') {
        const common = listParams(options, take, { walk: true, recent, window });
        return { rows: this.rows(pageSql(common.shape), common.params), ...common };
      }
      if (plan !== 'sort') return { rows: this.rows(pageOfMatchesSql(found.shape), { ...found.params, ids: plan.ids }), ...found };
    }
    return { rows: this.rows(pageSql(found.shape), found.params), ...found };
  }

  private rows(sql: string, params: Record<string, unknown>): PageRow[] {
    return prepare<[Record<string, unknown>], PageRow>(this.db, sql).raw(true).safeIntegers(true).all(params);
  }

  /**
   * For q in a name order through the trigram index: 'sort' when fewer than COMMON_Q names can hold it (the
   * page is its matches sorted, in one pass: CANDIDATES_SQL); 'common' when COMMON_Q names or more hold it
   * (the page is then found along the order's index); else, with the index holding every plant, the ids of
   * all the names that hold it, as a JSON array (the page is made from them, found in one pass), and while
   * the index is behind 'sort' (the page merges the index's matches with the plants written since, sorted).
   */
  private matchesInNameOrder(shape: ListShape, params: Record<string, unknown>): 'common' | 'sort' | { ids: string } {
    const capped = { ...params, cap: COMMON_Q };
    if (prepare<[Record<string, unknown>], number>(this.db, CANDIDATES_SQL).pluck().get(capped)! < COMMON_Q) return 'sort';
    const found = prepare<[Record<string, unknown>], { count: number; ids: string }>(this.db, MATCH_IDS_SQL).get(capped)!;
    if (found.count >= COMMON_Q) return 'common';
    return shape.q === 'recent' ? 'sort' : { ids: found.ids };
  }

  /** The last plant a scan's window examined, when it was full (list-sql.ts SCAN_WINDOW). */
  private scanEnd(shape: ListShape, params: Record<string, unknown>): { id: PlantId; name: string } | undefined {
    const end = prepare<[Record<string, unknown>], { id: bigint; name: string }>(this.db, scanEndSql(shape)).safeIntegers(true).get(params);
    return end && { id: toPlantId(end.id), name: end.name };
  }

  /** In the snapshot of the turn's other reads, as pages are: the count of a page's request agrees with it. */
  count(filter: PlantFilter = {}): Promise<number> {
    return this.reads.run(() => {
      const { shape, params } = filterParams(filter, { recent: this.recent(filter) });
      return prepare<[Record<string, unknown>], number>(this.db, countSql(shape)).pluck().get(params)!;
    });
  }

  /**
   * Whether a search must read the plants written after the index's mark besides the index (list-sql.ts),
   * asked in the snapshot of the read it is for.
   */
  private recent(filter: PlantFilter): boolean {
    return filter.q !== undefined && prepare<[], number>(this.db, RECENT_SQL).pluck().get() === 1;
  }

  put(plant: StoredPlant, options: PutOptions = {}): Promise<PutResult> {
    return this.writer.write(putOp(plant, options));
  }

  patch(id: PlantId, changes: PlantChanges, options: ConditionalOptions = {}): Promise<PatchResult> {
    return this.writer.write({ kind: 'patch', id, name: changes.name, tag: changes.tag, ifMatch: options.ifMatch, ifNoneMatch: options.ifNoneMatch });
  }

  delete(id: PlantId, options: ConditionalOptions = {}): Promise<DeleteResult> {
    return this.writer.write({ kind: 'delete', id, ifMatch: options.ifMatch, ifNoneMatch: options.ifNoneMatch });
  }

  export(options: ExportOptions): Promise<PlantExport> {
    return this.exports.open(options);
  }

  /** Rows are staged on the writer thread's connection as they arrive and merged by the commit (imports.ts). */
  startImport(): Promise<PlantImport> {
    return Promise.resolve(sqliteImport(this.writer));
  }
}
