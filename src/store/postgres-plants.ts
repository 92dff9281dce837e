import type pg from 'pg';
import { toPlantId, type PlantId } from '../plants/id.js';
import { newEventId } from '../webhooks/events.js';
import { translatePgError } from './postgres-errors.js';
import { postgresImport } from './postgres-imports.js';
import { bodyFor, insertMessages } from './postgres-outbox.js';
import { int8, type Query, type Transaction } from './postgres-query.js';
import type {
  IfMatch,
  ListOptions,
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

/** Counts the messages of a write's outbox CTE (named q) queued for delivery. */
const QUEUED = `(SELECT count(*) FROM q WHERE status = 'pending')::int AS queued`;

/** If-Match as SQL: `version = ANY($n)`, true for `*` (a NULL array); the row must exist either way. */
const MATCHES = (n: number) => `($${n}::bigint[] IS NULL OR version = ANY ($${n}::bigint[]))`;
const ifMatchParam = (ifMatch: IfMatch) => (ifMatch === '*' ? null : ifMatch.map(String));

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
 * Plants on PostgreSQL. Every race between instances is settled by one statement's atomicity (INSERT
 * ... ON CONFLICT, UPDATE ... WHERE version = ANY (…) RETURNING), and each write's webhook messages are
 * inserted by the same statement (a data-modifying CTE) or, for a patch, the same transaction. Versions
 * come from one sequence.
 */
export class PostgresPlants implements PlantStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly query: Query,
    private readonly transaction: Transaction,
    /** Told how many messages a committed write queued. */
    private readonly queued: (count: number) => void,
    /** Where lists, counts and exports read, when not from the primary (replicas: see postgres-replicas.ts). */
    private readonly reads: PlantReads = { query, connect: () => pool.connect() },
  ) {}

  async get(id: PlantId): Promise<VersionedPlant | undefined> {
    const { rows } = await this.query<PlantRow & { version: string }>(
      `SELECT id::text AS id, name, tag, version::text AS version FROM plants WHERE id = $1::bigint`,
      [int8(id)],
    );
    return rows[0] && { plant: toPlant(rows[0]), version: Number(rows[0].version) };
  }

  async list({ limit, after, tag }: ListOptions): Promise<Plant[]> {
    // Four plain statements rather than one with "$n IS NULL OR ...", so each uses its index directly.
    const { rows } =
      tag === undefined
        ? after === undefined
          ? await this.reads.query<PlantRow>(`${PLANT_COLUMNS} ORDER BY plants.id LIMIT $1`, [limit])
          : await this.reads.query<PlantRow>(`${PLANT_COLUMNS} WHERE id > $1::bigint ORDER BY plants.id LIMIT $2`, [int8(after), limit])
        : after === undefined
          ? await this.reads.query<PlantRow>(`${PLANT_COLUMNS} WHERE tag = $1 ORDER BY plants.id LIMIT $2`, [tag, limit])
          : await this.reads.query<PlantRow>(`${PLANT_COLUMNS} WHERE tag = $1 AND id > $2::bigint ORDER BY plants.id LIMIT $3`, [
              tag,
              int8(after),
              limit,
            ]);
    return rows.map(toPlant);
  }

  async count(tag?: string): Promise<number> {
    const { rows } =
      tag === undefined
        ? await this.reads.query<{ count: string }>('SELECT count(*) AS count FROM plants', [])
        : await this.reads.query<{ count: string }>('SELECT count(*) AS count FROM plants WHERE tag = $1', [tag]);
    return Number(rows[0]!.count);
  }

  async put(plant: Plant, options: PutOptions = {}): Promise<PutResult> {
    const at = Date.now();
    const values = [int8(plant.id), plant.name, plant.tag ?? null, newEventId(), at];
    if (options.ifMatch !== undefined) {
      // Only a plant that exists, at a version the client named, is replaced.
      const { rows } = await this.query<{ version: string | null; queued: number }>(
        `WITH w AS (UPDATE plants SET name = $2, tag = $3, version = nextval('plant_version') WHERE id = $1::bigint AND ${MATCHES(7)} RETURNING version),
              q AS (${insertMessages({ type: "'plant.updated'", payload: '$6', eventId: '$4', at: '$5::bigint', from: 'w' })})
         SELECT (SELECT version::text FROM w) AS version, ${QUEUED}`,
        [...values, bodyFor('plant.updated', plant, at), ifMatchParam(options.ifMatch)],
      );
      this.queued(rows[0]!.queued);
      return rows[0]!.version === null ? { outcome: 'precondition-failed' } : { outcome: 'replaced', version: Number(rows[0]!.version) };
    }
    if (options.createOnly) {
      const { rows } = await this.query<{ version: string | null; queued: number }>(
        `WITH w AS (INSERT INTO plants (id, name, tag, version) VALUES ($1::bigint, $2, $3, nextval('plant_version')) ON CONFLICT (id) DO NOTHING RETURNING version),
              q AS (${insertMessages({ type: "'plant.created'", payload: '$6', eventId: '$4', at: '$5::bigint', from: 'w' })})
         SELECT (SELECT version::text FROM w) AS version, ${QUEUED}`,
        [...values, bodyFor('plant.created', plant, at)],
      );
      this.queued(rows[0]!.queued);
      return rows[0]!.version === null ? { outcome: 'exists' } : { outcome: 'created', version: Number(rows[0]!.version) };
    }
    // One statement, so a concurrent writer's plant is replaced whole or not at all. xmax is 0 on a
    // row version this statement inserted, and the locking transaction's id on one it updated.
    const type = `CASE WHEN w.inserted THEN 'plant.created' ELSE 'plant.updated' END`;
    const { rows } = await this.query<{ inserted: boolean; version: string; queued: number }>(
      `WITH w AS (INSERT INTO plants (id, name, tag, version) VALUES ($1::bigint, $2, $3, nextval('plant_version'))
                  ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag, version = EXCLUDED.version
                  RETURNING (xmax = 0) AS inserted, version),
            q AS (${insertMessages({ type, payload: 'CASE WHEN w.inserted THEN $6 ELSE $7 END', eventId: '$4', at: '$5::bigint', from: 'w' })})
       SELECT w.inserted, w.version::text AS version, ${QUEUED} FROM w`,
      [...values, bodyFor('plant.created', plant, at), bodyFor('plant.updated', plant, at)],
    );
    this.queued(rows[0]!.queued);
    return { outcome: rows[0]!.inserted ? 'created' : 'replaced', version: Number(rows[0]!.version) };
  }

  async patch(
    id: PlantId,
    changes: PlantChanges,
    options: { ifMatch?: IfMatch | undefined } = {},
  ): Promise<VersionedPlant | 'not-found' | 'precondition-failed'> {
    const result = await this.transaction(async (query) => {
      // One UPDATE reads and writes the row under its lock: concurrent patches never lose a field.
      const { rows } = await query<PlantRow & { version: string }>(
        `UPDATE plants SET name = COALESCE($2::text, name), tag = CASE WHEN $3::boolean THEN $4::text ELSE tag END, version = nextval('plant_version')
         WHERE id = $1::bigint AND ${MATCHES(5)} RETURNING id::text AS id, name, tag, version::text AS version`,
        [
          int8(id),
          changes.name ?? null,
          changes.tag !== undefined,
          changes.tag ?? null,
          options.ifMatch === undefined ? null : ifMatchParam(options.ifMatch),
        ],
      );
      if (!rows[0]) return { patched: undefined, queued: 0 };
      const patched = { plant: toPlant(rows[0]), version: Number(rows[0].version) };
      const at = Date.now();
      const messages = await query<{ status: string }>(
        insertMessages({ type: "'plant.updated'", payload: '$3', eventId: '$1', at: '$2::bigint', from: '(SELECT 1) AS w' }),
        [newEventId(), at, bodyFor('plant.updated', patched.plant, at)],
      );
      return { patched, queued: messages.rows.filter((m) => m.status === 'pending').length };
    });
    this.queued(result.queued);
    return result.patched ?? (options.ifMatch === undefined ? 'not-found' : 'precondition-failed');
  }

  async delete(id: PlantId, options: { ifMatch?: IfMatch | undefined } = {}): Promise<'deleted' | 'not-found' | 'precondition-failed'> {
    const at = Date.now();
    const { rows } = await this.query<{ deleted: number; queued: number }>(
      `WITH w AS (DELETE FROM plants WHERE id = $1::bigint AND ${MATCHES(5)} RETURNING 1),
            q AS (${insertMessages({ type: "'plant.deleted'", payload: '$4', eventId: '$2', at: '$3::bigint', from: 'w' })})
       SELECT (SELECT count(*) FROM w)::int AS deleted, ${QUEUED}`,
      [int8(id), newEventId(), at, bodyFor('plant.deleted', { id }, at), options.ifMatch === undefined ? null : ifMatchParam(options.ifMatch)],
    );
    this.queued(rows[0]!.queued);
    if (rows[0]!.deleted === 1) return 'deleted';
    return options.ifMatch === undefined ? 'not-found' : 'precondition-failed';
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
