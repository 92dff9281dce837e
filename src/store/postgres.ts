import pg from 'pg';
import { translatePgError } from './postgres-errors.js';
import { migratePostgres } from './postgres-migrate.js';
import { PostgresWriteBatcher } from './postgres-batch.js';
import { PostgresPlants } from './postgres-plants.js';
import { poolQuery, poolTransaction } from './postgres-query.js';
import { PostgresRateCounter } from './postgres-rate-counter.js';
import { PostgresTokens } from './postgres-tokens.js';
import { PostgresWebhooks } from './postgres-webhooks.js';
import { StoreUnavailableError, type CommitObserver, type PlantStore, type RateCounter, type Store, type TokenStore } from './store.js';

export interface PostgresOptions {
  /** Connections this process keeps at most. */
  poolSize: number;
  /** Longest wait for a connection, and longest a statement may run, before the store is unavailable. */
  timeoutMs: number;
  /** Writes waiting for their batch at most (WRITE_QUEUE_LIMIT; default 10,000). */
  writeQueueLimit?: number;
  /** Told of every commit of plant writes: how many writes the batch held, how long it took from sending (metrics). */
  onCommit?: CommitObserver | undefined;
}

/**
 * Group commit (postgres-batch.ts): batches committing at once. Few, so that writes arriving meanwhile
 * gather into large batches; more than one, so that a batch is formed while another commits.
 */
const BATCHES_IN_FLIGHT = 2;
/** Writes in one batch at most: bounds a statement's parameters and a transaction's length. */
const MAX_BATCH = 1000;

/** Readiness probes want a quick answer: a ping waits at most this long (or timeoutMs if shorter). */
const PING_TIMEOUT_MS = 2000;

/**
 * The PostgreSQL store: many service instances on one database. Each write is one statement or one
 * transaction, durable when it returns (with PostgreSQL's own group commit), and every race between
 * instances is settled by the database.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres';
  readonly plants: PlantStore;
  readonly tokens: TokenStore;
  readonly webhooks: PostgresWebhooks;
  readonly rateCounter: RateCounter;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly timeoutMs: number,
    options: PostgresOptions,
  ) {
    const query = poolQuery(pool);
    const transaction = poolTransaction(pool);
    this.webhooks = new PostgresWebhooks(query, transaction);
    const writes = new PostgresWriteBatcher(
      query,
      transaction,
      { maxInFlight: BATCHES_IN_FLIGHT, maxBatch: MAX_BATCH, queueLimit: options.writeQueueLimit ?? 10_000 },
      this.webhooks.queued,
      options.onCommit,
    );
    this.plants = new PostgresPlants(pool, query, writes, this.webhooks.queued);
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
    return new PostgresStore(pool, options.timeoutMs, options);
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
