import type pg from 'pg';
import { toPlantId, type PlantId } from '../../model/plant-id.js';
import { openExport } from './exports.js';
import { postgresImport, type ImportListeners } from './imports.js';
import type { PostgresWriteBatcher } from './group-commit.js';
import { putWrite } from './plant-writes.js';
import type { PlantLookups } from './gathered-reads.js';
import type { PlantReads } from './query.js';
import { toPlant } from '../rows.js';
import { countStatement, pageStatement, type PageRow } from './list-sql.js';
import type {
  ConditionalOptions,
  DeleteResult,
  ExportOptions,
  ListOptions,
  PatchResult,
  PlantPage,
  PlantChanges,
  PlantExport,
  PlantFilter,
  PlantImport,
  PlantStore,
  PutOptions,
  PutResult,
  VersionedPlant,
} from '../store.js';
import type { StoredPlant } from '../../model/plant.js';

/**
 * Plants on PostgreSQL: reads by id gathered into shared statements (postgres/gathered-reads.ts), other reads
 * on the pool, writes through the group commit (postgres/group-commit.ts, with the SQL of each write in
 * postgres/plant-writes.ts), exports and imports on connections of their own.
 */
export class PostgresPlants implements PlantStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly writes: PostgresWriteBatcher,
    /** Single plants by id, from the primary (on its connections for reads), gathered into shared statements. */
    private readonly lookups: PlantLookups,
    /** Told of a committed import: how many messages it queued, and that it recorded events. */
    private readonly imported: ImportListeners,
    /** Where lists, counts and exports read: the primary, or replicas while usable (postgres/replicas.ts). */
    private readonly reads: PlantReads,
  ) {}

  async get(id: PlantId): Promise<VersionedPlant | undefined> {
    const row = await this.lookups.get(id);
    return row && { plant: toPlant(row), version: Number(row.version) };
  }

  /** One statement for them all, on the connections single reads use (the primary): a write answered before is seen. */
  async getMany(ids: readonly PlantId[]): Promise<Array<VersionedPlant | undefined>> {
    const found = new Map((await this.lookups.many(ids)).map((row) => [row.id, { plant: toPlant(row), version: Number(row.version) }]));
    return ids.map((id) => found.get(String(id)));
  }

  /** One statement per page, built for the request's shape (list-sql.ts). */
  async page(options: ListOptions): Promise<PlantPage> {
    const { text, values } = pageStatement(options);
    const { rows } = await this.reads.query<PageRow>(text, values);
    const { json, count, last_id: lastId, last_name: lastName, more } = rows[0]!;
    return { json, count, next: more && lastId !== null && lastName !== null ? { id: toPlantId(lastId), name: lastName } : undefined };
  }

  async count(filter: PlantFilter = {}): Promise<number> {
    const { text, values } = countStatement(filter);
    const { rows } = await this.reads.query<{ count: string }>(text, values);
    return Number(rows[0]!.count);
  }

  put(plant: StoredPlant, options: PutOptions = {}): Promise<PutResult> {
    return this.writes.write(putWrite(plant, options)) as Promise<PutResult>;
  }

  patch(id: PlantId, changes: PlantChanges, options: ConditionalOptions = {}): Promise<PatchResult> {
    return this.writes.write({ kind: 'patch', id, changes, ifMatch: options.ifMatch, ifNoneMatch: options.ifNoneMatch }) as Promise<PatchResult>;
  }

  delete(id: PlantId, options: ConditionalOptions = {}): Promise<DeleteResult> {
    return this.writes.write({ kind: 'delete', id, ifMatch: options.ifMatch, ifNoneMatch: options.ifNoneMatch }) as Promise<DeleteResult>;
  }

  /** One REPEATABLE READ transaction on a connection of its own (exports.ts). */
  export(options: ExportOptions): Promise<PlantExport> {
    return openExport(this.reads, options);
  }

  startImport(): Promise<PlantImport> {
    return postgresImport(this.pool, this.imported);
  }
}
