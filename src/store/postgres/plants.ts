import type pg from 'pg';
import { toPlantId, type PlantId } from '../../plants/id.js';
import { openExport } from './exports.js';
import { postgresImport, type ImportListeners } from './imports.js';
import type { PostgresWriteBatcher } from './group-commit.js';
import type { PlantLookups } from './lookups.js';
import { int8, named, type Query } from './query.js';
import { toPlant } from '../rows.js';
import { pageSql } from './rows.js';
import type {
  ConditionalOptions,
  DeleteResult,
  ListOptions,
  PatchResult,
  PlantPage,
  Plant,
  PlantChanges,
  PlantExport,
  PlantImport,
  PlantStore,
  PutOptions,
  PutResult,
  VersionedPlant,
} from '../store.js';

/** The four page statements, named: made once, not per request. */
const PAGE = {
  first: named('plant_page', pageSql('', false)),
  after: named('plant_page_after', pageSql('WHERE id > $2::bigint', false)),
  tagged: named('plant_page_tag', pageSql('WHERE tag = $2', true)),
  taggedAfter: named('plant_page_tag_after', pageSql('WHERE tag = $2 AND id > $3::bigint', true)),
};

interface PageRow {
  json: string;
  count: number;
  last: string | null;
  more: boolean;
}

/** Lists, counts and exports: the primary's, or replicas that may be a little behind it. */
export interface PlantReads {
  query: Query;
  connect(): Promise<pg.PoolClient>;
}

/**
 * Plants on PostgreSQL: reads by id gathered into shared statements (postgres/lookups.ts), other reads
 * on the pool, writes through the group commit (postgres/group-commit.ts, with the SQL of each write in
 * postgres/writes.ts), exports and imports on connections of their own.
 */
export class PostgresPlants implements PlantStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly query: Query,
    private readonly writes: PostgresWriteBatcher,
    /** Single plants by id, from the primary, gathered into shared statements. */
    private readonly lookups: PlantLookups,
    /** Told of a committed import: how many messages it queued, and that it recorded events. */
    private readonly imported: ImportListeners,
    /** Where lists, counts and exports read, when not from the primary (replicas: see postgres/replicas.ts). */
    private readonly reads: PlantReads = { query, connect: () => pool.connect() },
  ) {}

  async get(id: PlantId): Promise<VersionedPlant | undefined> {
    const row = await this.lookups.get(id);
    return row && { plant: toPlant(row), version: Number(row.version) };
  }

  async page({ limit, after, tag }: ListOptions): Promise<PlantPage> {
    // Four plain statements rather than one with "$n IS NULL OR ...", so each uses its index directly.
    const { rows } =
      tag === undefined
        ? after === undefined
          ? await this.reads.query<PageRow>(PAGE.first, [limit])
          : await this.reads.query<PageRow>(PAGE.after, [limit, int8(after)])
        : after === undefined
          ? await this.reads.query<PageRow>(PAGE.tagged, [limit, tag])
          : await this.reads.query<PageRow>(PAGE.taggedAfter, [limit, tag, int8(after)]);
    const { json, count, last, more } = rows[0]!;
    return { json, count, next: more && last !== null ? toPlantId(last) : undefined };
  }

  async count(tag?: string): Promise<number> {
    const { rows } =
      tag === undefined
        ? await this.reads.query<{ count: string }>('SELECT count(*) AS count FROM plants', [])
        : await this.reads.query<{ count: string }>('SELECT count(*) AS count FROM plants WHERE tag = $1', [tag]);
    return Number(rows[0]!.count);
  }

  put(plant: Plant, options: PutOptions = {}): Promise<PutResult> {
    return this.writes.write({ kind: 'put', plant, createOnly: options.createOnly === true, ifMatch: options.ifMatch }) as Promise<PutResult>;
  }

  patch(id: PlantId, changes: PlantChanges, options: ConditionalOptions = {}): Promise<PatchResult> {
    return this.writes.write({ kind: 'patch', id, changes, ifMatch: options.ifMatch }) as Promise<PatchResult>;
  }

  delete(id: PlantId, options: ConditionalOptions = {}): Promise<DeleteResult> {
    return this.writes.write({ kind: 'delete', id, ifMatch: options.ifMatch }) as Promise<DeleteResult>;
  }

  /** One REPEATABLE READ transaction on a connection of its own (exports.ts). */
  export({ tag }: { tag?: string | undefined }): Promise<PlantExport> {
    return openExport(this.reads, tag);
  }

  startImport(): Promise<PlantImport> {
    return postgresImport(this.pool, this.imported);
  }
}
