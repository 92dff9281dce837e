import pg from 'pg';
import type { Scope } from '../auth/scopes.js';
import { toPlantId, type PlantId } from '../plants/id.js';
import { translatePgError } from './postgres-errors.js';
import { migratePostgres } from './postgres-migrate.js';
import { PostgresRateCounter } from './postgres-rate-counter.js';
import type { Query } from './postgres-query.js';
import {
  DuplicateTokenNameError,
  StoreUnavailableError,
  type ListOptions,
  type Plant,
  type PlantChanges,
  type PlantStore,
  type PutOutcome,
  type RateCounter,
  type Store,
  type TokenRecord,
  type TokenStore,
} from './store.js';

export interface PostgresOptions {
  /** Connections this process keeps at most. */
  poolSize: number;
  /** Longest wait for a connection, and longest a statement may run, before the store is unavailable. */
  timeoutMs: number;
}

/** Readiness probes want a quick answer: a ping waits at most this long (or timeoutMs if shorter). */
const PING_TIMEOUT_MS = 2000;

/** An id as a query parameter: decimal text, so that no digit ever passes through a float. */
function idParam(id: PlantId): string {
  return typeof id === 'bigint' ? id.toString() : String(id);
}

interface PlantRow {
  id: string;
  name: string;
  tag: string | null;
}

function toPlant(row: PlantRow): Plant {
  const id = toPlantId(row.id);
  return row.tag === null ? { id, name: row.name } : { id, name: row.name, tag: row.tag };
}

/**
 * The PostgreSQL store: many service instances on one database. Each statement autocommits (and is
 * durable when it returns, with Postgres's own group commit), and every race between instances is
 * settled by one statement's atomicity: INSERT ... ON CONFLICT, UPDATE ... RETURNING.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres';
  readonly plants: PlantStore;
  readonly tokens: TokenStore;
  readonly rateCounter: RateCounter;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly timeoutMs: number,
  ) {
    const query: Query = async (text, values) => {
      try {
        return await pool.query(text, values);
      } catch (error) {
        throw translatePgError(error);
      }
    };
    this.plants = new PostgresPlants(query);
    this.tokens = new PostgresTokens(query);
    this.rateCounter = new PostgresRateCounter(query);
  }

  /** Connects, applies the migrations not yet applied (under an advisory lock), and opens the pool. */
  static async open(url: string, options: PostgresOptions): Promise<PostgresStore> {
    const connection: pg.ClientConfig = {
      connectionString: url,
      connectionTimeoutMillis: options.timeoutMs,
      keepAlive: true,
      application_name: 'plant-store',
    };
    const migrator = new pg.Client(connection);
    // A connection lost while migrating surfaces through the query that fails; this keeps it from
    // also being an unhandled 'error' event.
    migrator.on('error', () => undefined);
    try {
      await migrator.connect();
      await migratePostgres(migrator);
    } catch (error) {
      throw translatePgError(error);
    } finally {
      await migrator.end().catch(() => undefined);
    }
    const pool = new pg.Pool({
      ...connection,
      max: options.poolSize,
      idleTimeoutMillis: 30_000,
      // The server cancels a statement that runs too long; the client gives up a little later in
      // case the server itself cannot be heard from (a network partition).
      statement_timeout: options.timeoutMs,
      query_timeout: options.timeoutMs + 1000,
      idle_in_transaction_session_timeout: options.timeoutMs * 2,
    });
    // An idle connection that the server closes (restart, failover, admin shutdown) is reported
    // here; the pool drops it and opens a new one on demand, so there is nothing else to do.
    pool.on('error', () => undefined);
    return new PostgresStore(pool, options.timeoutMs);
  }

  async ping(): Promise<void> {
    const limit = Math.min(PING_TIMEOUT_MS, this.timeoutMs);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreUnavailableError(`PostgreSQL did not answer within ${limit} ms`)), limit);
    });
    try {
      // query_timeout per query is supported by pg but missing from its typings.
      await Promise.race([this.pool.query({ text: 'SELECT 1', query_timeout: limit } as pg.QueryConfig), timeout]);
    } catch (error) {
      throw translatePgError(error);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (!this.pool.ended && !this.pool.ending) await this.pool.end();
  }
}

// id as text: int8 parsed by toPlantId, whatever type parsers the process has installed. (ORDER BY must then
// name plants.id: a bare "id" there would be the text column and sort "10" before "5".)
const PLANT_COLUMNS = 'SELECT id::text AS id, name, tag FROM plants';

class PostgresPlants implements PlantStore {
  constructor(private readonly query: Query) {}

  async get(id: PlantId): Promise<Plant | undefined> {
    const { rows } = await this.query<PlantRow>(`${PLANT_COLUMNS} WHERE id = $1::bigint`, [idParam(id)]);
    return rows[0] && toPlant(rows[0]);
  }

  async list({ limit, after, tag }: ListOptions): Promise<Plant[]> {
    // Four plain statements rather than one with "$n IS NULL OR ...", so each uses its index directly.
    const { rows } =
      tag === undefined
        ? after === undefined
          ? await this.query<PlantRow>(`${PLANT_COLUMNS} ORDER BY plants.id LIMIT $1`, [limit])
          : await this.query<PlantRow>(`${PLANT_COLUMNS} WHERE id > $1::bigint ORDER BY plants.id LIMIT $2`, [idParam(after), limit])
        : after === undefined
          ? await this.query<PlantRow>(`${PLANT_COLUMNS} WHERE tag = $1 ORDER BY plants.id LIMIT $2`, [tag, limit])
          : await this.query<PlantRow>(`${PLANT_COLUMNS} WHERE tag = $1 AND id > $2::bigint ORDER BY plants.id LIMIT $3`, [
              tag,
              idParam(after),
              limit,
            ]);
    return rows.map(toPlant);
  }

  async put(plant: Plant, options: { createOnly?: boolean } = {}): Promise<PutOutcome> {
    const values = [idParam(plant.id), plant.name, plant.tag ?? null];
    if (options.createOnly) {
      const { rowCount } = await this.query('INSERT INTO plants (id, name, tag) VALUES ($1::bigint, $2, $3) ON CONFLICT (id) DO NOTHING', values);
      return rowCount === 1 ? 'created' : 'exists';
    }
    // One statement, so a concurrent writer's plant is replaced whole or not at all. xmax is 0 on a
    // row version this statement inserted, and the locking transaction's id on one it updated.
    const { rows } = await this.query<{ inserted: boolean }>(
      `INSERT INTO plants (id, name, tag) VALUES ($1::bigint, $2, $3)
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag
       RETURNING (xmax = 0) AS inserted`,
      values,
    );
    return rows[0]?.inserted ? 'created' : 'replaced';
  }

  async patch(id: PlantId, changes: PlantChanges): Promise<Plant | undefined> {
    // One UPDATE reads and writes the row under its lock: concurrent patches never lose a field.
    const { rows } = await this.query<PlantRow>(
      `UPDATE plants SET name = COALESCE($2::text, name), tag = CASE WHEN $3::boolean THEN $4::text ELSE tag END
       WHERE id = $1::bigint RETURNING id::text AS id, name, tag`,
      [idParam(id), changes.name ?? null, changes.tag !== undefined, changes.tag ?? null],
    );
    return rows[0] && toPlant(rows[0]);
  }

  async delete(id: PlantId): Promise<boolean> {
    const { rowCount } = await this.query('DELETE FROM plants WHERE id = $1::bigint', [idParam(id)]);
    return rowCount === 1;
  }
}

interface TokenRow {
  id: string;
  name: string;
  hash: Buffer;
  scopes: string;
  created_at: Date;
  revoked_at: Date | null;
}

function toToken(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes.split(' ') as Scope[],
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at ? row.revoked_at.toISOString() : null,
  };
}

/** The partial unique index that lets only one active token carry a name (see migrations/postgres.ts, version 1). */
const ACTIVE_NAME_INDEX = 'tokens_active_name';
const UNIQUE_VIOLATION = '23505';

class PostgresTokens implements TokenStore {
  constructor(private readonly query: Query) {}

  async create(token: { id: string; name: string; hash: Buffer; scopes: Scope[] }): Promise<TokenRecord> {
    // The time comes from here, in milliseconds, so that the record answered equals the one listed later.
    const createdAt = new Date().toISOString();
    try {
      await this.query('INSERT INTO tokens (id, name, hash, scopes, created_at) VALUES ($1, $2, $3, $4, $5)', [
        token.id,
        token.name,
        token.hash,
        token.scopes.join(' '),
        createdAt,
      ]);
    } catch (error) {
      if (error instanceof pg.DatabaseError && error.code === UNIQUE_VIOLATION && error.constraint === ACTIVE_NAME_INDEX) {
        throw new DuplicateTokenNameError(token.name);
      }
      throw error;
    }
    return { id: token.id, name: token.name, scopes: token.scopes, createdAt, revokedAt: null };
  }

  async findActiveByHash(hash: Buffer): Promise<(TokenRecord & { hash: Buffer }) | undefined> {
    const { rows } = await this.query<TokenRow>('SELECT * FROM tokens WHERE hash = $1 AND revoked_at IS NULL', [hash]);
    return rows[0] && { ...toToken(rows[0]), hash: rows[0].hash };
  }

  async list(): Promise<TokenRecord[]> {
    // COLLATE "C": byte order, as SQLite sorts text, whatever the database's locale.
    const { rows } = await this.query<TokenRow>('SELECT * FROM tokens ORDER BY created_at, id COLLATE "C"', []);
    return rows.map(toToken);
  }

  async revoke(idOrName: string): Promise<boolean> {
    const { rowCount } = await this.query('UPDATE tokens SET revoked_at = $1 WHERE (id = $2 OR name = $2) AND revoked_at IS NULL', [
      new Date().toISOString(),
      idOrName,
    ]);
    return (rowCount ?? 0) > 0;
  }

  async count(): Promise<number> {
    const { rows } = await this.query<{ count: string }>('SELECT count(*) AS count FROM tokens', []);
    return Number(rows[0]?.count ?? 0);
  }
}
