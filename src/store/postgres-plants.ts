import type pg from 'pg';
import { toPlantId, type PlantId } from '../plants/id.js';
import { translatePgError } from './postgres-errors.js';
import { postgresImport } from './postgres-imports.js';
import type { PostgresWriteBatcher } from './postgres-batch.js';
import type { PlantLookups } from './postgres-lookups.js';
import { int8, named, type Query } from './postgres-query.js';
import type { PlantWriteResults } from './postgres-writes.js';
import type {
  IfMatch,
  ListOptions,
  PlantPage,
  Plant,
  PlantChanges,
  PlantExport,
  PlantImport,
  PlantStore,
  PutOptions,
  PutResult,
  VersionedPlant,
} from './store.js';

interface PlantRow {
  id: string;
  name: string;
  tag: string | null;
}

function toPlant(row: PlantRow): Plant {
  const id = toPlantId(row.id);
  return row.tag === null ? { id, name: row.name } : { id, name: row.name, tag: row.tag };
}

// id as text: int8 parsed by toPlantId, whatever type parsers the process has installed. (ORDER BY must then
// name plants.id: a bare "id" there would be the text column and sort "10" before "5".)
const PLANT_COLUMNS = 'SELECT id::text AS id, name, tag FROM plants';

/**
 * A plants row as JSON text: `{"id":…,"name":…}`, with `"tag":…` when it has one. to_json's escaping of
 * text is JSON.stringify's, byte for byte (the store contract tests check every UTF-16 code unit), and
 * ids are written as exact integers.
 */
const PLANT_JSON = `'{"id":' || id || ',"name":' || to_json(name)::text || CASE WHEN tag IS NULL THEN '}' ELSE ',"tag":' || to_json(tag)::text || '}' END`;

/** One page as one row: the page's JSON, how many plants, the last id, whether more follow. $1 is the limit; `where` uses $2 on. */
function pageSql(where: string, tagged: boolean): string {
  return `WITH page AS (SELECT id, name, tag FROM plants ${where} ORDER BY id LIMIT $1)
    SELECT COALESCE('[' || string_agg(${PLANT_JSON}, ',' ORDER BY id) || ']', '[]') AS json, count(*)::int AS count, max(id)::text AS last,
           EXISTS (SELECT 1 FROM plants WHERE ${tagged ? 'tag = $2 AND ' : ''}id > (SELECT max(id) FROM page)) AS more
    FROM page`;
}

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

/** Plants are exported this many at a time, each chunk from the export's own snapshot. */
const EXPORT_CHUNK = 1000;
/** An export or import holds its transaction open while the client sends or reads: it may idle this long. */
const LONG_IDLE = '10min';

/**
 * Plants on PostgreSQL: reads by id gathered into shared statements (postgres-lookups.ts), other reads
 * on the pool, writes through the group commit (postgres-batch.ts, with the SQL of each write in
 * postgres-writes.ts), exports and imports on connections of their own.
 */
export class PostgresPlants implements PlantStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly query: Query,
    private readonly writes: PostgresWriteBatcher,
    /** Single plants by id, from the primary, gathered into shared statements. */
    private readonly lookups: PlantLookups,
    /** Told how many messages a committed import queued. */
    private readonly queued: (count: number) => void,
    /** Where lists, counts and exports read, when not from the primary (replicas: see postgres-replicas.ts). */
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

  patch(
    id: PlantId,
    changes: PlantChanges,
    options: { ifMatch?: IfMatch | undefined } = {},
  ): Promise<VersionedPlant | 'not-found' | 'precondition-failed'> {
    return this.writes.write({ kind: 'patch', id, changes, ifMatch: options.ifMatch }) as Promise<PlantWriteResults['patch']>;
  }

  delete(id: PlantId, options: { ifMatch?: IfMatch | undefined } = {}): Promise<'deleted' | 'not-found' | 'precondition-failed'> {
    return this.writes.write({ kind: 'delete', id, ifMatch: options.ifMatch }) as Promise<PlantWriteResults['delete']>;
  }

  /** One REPEATABLE READ transaction on a connection of its own: a snapshot, read a chunk at a time by key. */
  async export({ tag }: { tag?: string | undefined }): Promise<PlantExport> {
    let client: pg.PoolClient;
    try {
      client = await this.reads.connect();
    } catch (error) {
      throw translatePgError(error);
    }
    const snapshot = new PostgresExport(client, tag);
    try {
      await snapshot.begin();
    } catch (error) {
      await snapshot.close();
      throw error;
    }
    return snapshot;
  }

  startImport(): Promise<PlantImport> {
    return postgresImport(this.pool, this.queued);
  }
}

class PostgresExport implements PlantExport {
  private released = false;
  private broken = false;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly tag: string | undefined,
  ) {}

  async begin(): Promise<void> {
    // The snapshot is taken at the first query, not at BEGIN: take it now, when the export was asked for.
    await this.run(
      `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL idle_in_transaction_session_timeout = '${LONG_IDLE}'; SELECT 1 FROM plants LIMIT 1`,
      [],
    );
  }

  async count(): Promise<number> {
    const { rows } = await this.run<{ count: string }>(
      `SELECT count(*) AS count FROM plants ${this.tag === undefined ? '' : 'WHERE tag = $1'}`,
      this.tag === undefined ? [] : [this.tag],
    );
    return Number(rows[0]!.count);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Plant[]> {
    try {
      const filter = this.tag === undefined ? '' : 'tag = $3 AND ';
      let after: string | null = null;
      for (;;) {
        const { rows }: pg.QueryResult<PlantRow> = await this.run<PlantRow>(
          `${PLANT_COLUMNS} WHERE ${filter}($1::bigint IS NULL OR id > $1::bigint) ORDER BY plants.id LIMIT $2`,
          this.tag === undefined ? [after, EXPORT_CHUNK] : [after, EXPORT_CHUNK, this.tag],
        );
        if (rows.length > 0) yield rows.map(toPlant);
        if (rows.length < EXPORT_CHUNK) break;
        after = rows.at(-1)!.id;
      }
    } finally {
      await this.close();
    }
  }

  /** Ended early (the client went away) or not: the snapshot is released and the connection given back. */
  async close(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.client.query('ROLLBACK').catch(() => (this.broken = true));
    this.client.release(this.broken);
  }

  private async run<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.client.query<R>(text, values);
    } catch (error) {
      this.broken = true;
      throw translatePgError(error);
    }
  }
}
