import type pg from 'pg';
import { translatePgError } from './errors.js';
import { connectClient, FailoverPool, hostOf, Hosts, type HostClient } from './hosts/hosts.js';
import { describeRole, sessionRole } from './hosts/sessions.js';
import { VERSION } from '../../version.js';
import { InstanceRegistry } from './instances.js';
import { migratePostgres } from './migrate.js';
import { POSTGRES_MIGRATIONS } from './migrations.js';
import { PostgresEvents } from './feed.js';
import { PostgresIdempotency } from './idempotency.js';
import { PostgresWrites } from './writes.js';
import { PostgresSearchIndex } from './search-index.js';
import { PostgresWriteBatcher } from './group-commit.js';
import { PostgresPlants } from './plants.js';
import { PlantLookups } from './gathered-reads.js';
import { poolQuery, poolQueryBy, poolTransaction, type PlantReads } from './query.js';
import { PostgresRateCounter } from './rate-counter.js';
import { ReplicaReads } from './replicas.js';
import { PostgresTokens } from './tokens.js';
import { parsePostgresUrl } from './hosts/url.js';
import { PostgresWebhooks } from './webhooks.js';
import type { BatchTracing } from '../batcher.js';
import type { Migrated } from '../migration.js';
import {
  StoreUnavailableError,
  type BatchCounts,
  type CommitObserver,
  type PlantStore,
  type RateCounter,
  type Store,
  type TokenStore,
} from '../store.js';

export interface PostgresOptions {
  /** Connections this process keeps at most (to the primary, and as many to the replicas). */
  poolSize: number;
  /**
   * Connections to the primary kept for short reads (GET by id, lists, counts, stored tokens), beside
   * `poolSize`, so that they never wait behind writes for a connection; opened by open() and kept open.
   * 0 (the default): reads share the pool.
   */
  readPoolSize?: number;
  /** Longest a store call waits for the database: finding a connection (over every host) and its statements together. */
  timeoutMs: number;
  /** Writes waiting for their batch at most (WRITE_QUEUE_LIMIT; default 10,000). */
  writeQueueLimit?: number;
  /** Told of every commit of plant writes: how many writes the batch held, how long it took from sending (metrics). */
  onCommit?: CommitObserver | undefined;
  /** Replicas for lists, counts and exports (DATABASE_READ_URL), and how far behind they may be. */
  replicas?: { url: string; maxLagMs: number } | undefined;
  /** Traces the group commit's batches and the gathered reads by id (tracing on). */
  tracing?: BatchTracing | undefined;
}

/**
 * Group commit (postgres/group-commit.ts): batches committing at once. Few, so that writes arriving meanwhile
 * gather into large batches; more than one, so that a batch is formed while another commits.
 */
const BATCHES_IN_FLIGHT = 2;
/** Writes in one batch at most: bounds a statement's parameters and a transaction's length. */
const MAX_BATCH = 1000;

/** Readiness probes want a quick answer: a ping waits at most this long (or timeoutMs if shorter). */
const PING_TIMEOUT_MS = 2000;

/**
 * The PostgreSQL store: many service instances on one database. Plant writes that arrive together share
 * one statement or transaction (group-commit.ts), each durable when its batch commits; other writes are
 * one statement or transaction each; every race between instances is settled by the database.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres';
  readonly plants: PlantStore;
  readonly tokens: TokenStore;
  readonly webhooks: PostgresWebhooks;
  readonly events: PostgresEvents;
  readonly searchIndex: PostgresSearchIndex;
  readonly rateCounter: RateCounter;
  readonly writeBatches: Readonly<BatchCounts>;
  readonly writes: PostgresWrites;
  readonly idempotency: PostgresIdempotency;
  /** This process in the database's registry of processes and their releases (instances.ts). */
  readonly registry: InstanceRegistry;

  private constructor(
    private readonly pool: FailoverPool,
    /** The reads' own connections to the primary (PostgresOptions.readPoolSize), or undefined when they share `pool`. */
    private readonly readPool: FailoverPool | undefined,
    private readonly replicaPool: FailoverPool | undefined,
    private readonly timeoutMs: number,
    options: PostgresOptions,
    readonly warnings: readonly string[],
    readonly migrated: Migrated,
  ) {
    const query = poolQuery(pool, timeoutMs);
    const transaction = poolTransaction(pool, timeoutMs);
    // Reads that must see every acknowledged write still go to the primary (read committed: each statement
    // sees every commit before it began), on connections the writes' group commits, webhooks and feed never
    // hold (unless readPoolSize is 0).
    const reader = readPool ?? pool;
    const readQuery = poolQuery(reader, timeoutMs);
    this.webhooks = new PostgresWebhooks(query);
    this.events = new PostgresEvents(query);
    this.searchIndex = new PostgresSearchIndex(poolQueryBy(pool));
    // An export holds its connection for the whole download (one REPEATABLE READ transaction): it stays on
    // the main pool, so that a few exports cannot take every connection the short reads have.
    const onPrimary: PlantReads = { query: readQuery, connect: () => pool.connect() };
    const reads = replicaPool ? new ReplicaReads(replicaPool, onPrimary, { maxLagMs: options.replicas?.maxLagMs ?? 0, timeoutMs }) : onPrimary;
    const writes = new PostgresWriteBatcher(
      poolQueryBy(pool),
      transaction,
      { maxInFlight: BATCHES_IN_FLIGHT, maxBatch: MAX_BATCH, queueLimit: options.writeQueueLimit ?? 10_000, timeoutMs },
      this.webhooks.queued,
      this.events.recorded,
      options.onCommit,
      options.tracing?.({ system: 'postgresql', operation: 'commit' }),
    );
    this.writeBatches = writes.batches;
    const lookups = new PlantLookups(
      poolQueryBy(reader),
      { maxInFlight: BATCHES_IN_FLIGHT, maxBatch: MAX_BATCH, timeoutMs },
      options.tracing?.({ system: 'postgresql', operation: 'lookup' }),
    );
    this.plants = new PostgresPlants(pool, writes, lookups, { queued: this.webhooks.queued, recorded: this.events.recorded }, reads);
    this.writes = new PostgresWrites(query, transaction, writes);
    this.idempotency = new PostgresIdempotency(query);
    this.tokens = new PostgresTokens(query, readQuery);
    this.rateCounter = new PostgresRateCounter(query);
    // On the reads' connections when there are some: kept open anyway, and never waiting behind writes, so
    // that a beat is on time while the writes queue up.
    this.registry = new InstanceRegistry(readQuery, POSTGRES_MIGRATIONS.at(-1)!.version);
  }

  /**
   * Finds the primary among the URL's hosts, applies the migrations not yet applied (under an advisory
   * lock), and opens the pools: one to the primary, one more to it for reads (unless readPoolSize is 0), and
   * one to the replicas when there are some. The two pools to the primary share its hosts, so both find the
   * same primary, and a failover found by one is tried first by the other.
   */
  static async open(url: string, options: PostgresOptions): Promise<PostgresStore> {
    // pg_stat_activity names each session's release too: plant-store/1.1.0 (releases before 1.1.0 said plant-store).
    const connection: pg.ClientConfig = { keepAlive: true, application_name: `plant-store/${VERSION}` };
    // The service writes: unless the URL says otherwise, only the primary will do.
    const hosts = hostsOf(url, 'primary', options.timeoutMs);
    let migrator: HostClient | undefined;
    let warnings: string[];
    let migrated: Migrated;
    try {
      migrator = await connectClient(hosts, connection, Date.now() + options.timeoutMs);
      const { applied, held } = await migratePostgres(migrator);
      const named = new Map(POSTGRES_MIGRATIONS.map((m) => [m.version, m.name]));
      migrated = {
        created: applied.length === POSTGRES_MIGRATIONS.length,
        applied: applied.map((version) => ({ version, name: named.get(version)! })),
      };
      warnings = [...held, ...(await checkSearchIndex(migrator))];
    } catch (error) {
      throw translatePgError(error);
    } finally {
      await migrator?.end().catch(() => undefined);
    }
    const pooled = (of: Hosts, max: number, min = 0) => {
      const pool = new FailoverPool(
        of,
        {
          ...connection,
          max,
          min,
          idleTimeoutMillis: 30_000,
          connectionTimeoutMillis: options.timeoutMs,
          // The server cancels a statement that runs too long; the client stops waiting at the store call's
          // deadline (postgres/query.ts), or for statements without one a little after this.
          statement_timeout: options.timeoutMs,
          query_timeout: options.timeoutMs + 1000,
          idle_in_transaction_session_timeout: options.timeoutMs * 2,
        },
        options.timeoutMs,
      );
      // An idle connection that the server closes (restart, failover, admin shutdown) is reported
      // here; the pool drops it and opens a new one on demand, so there is nothing else to do.
      pool.on('error', () => undefined);
      return pool;
    };
    const replicas = options.replicas && pooled(hostsOf(options.replicas.url, 'any', options.timeoutMs), options.poolSize);
    const readPoolSize = options.readPoolSize ?? 0;
    // The reads' connections are opened now and kept open when idle: one opened when a read needs it, while
    // writes keep the server busy, took hundreds of milliseconds (bench getunderpost), which the reads queued
    // behind it waited.
    const reads = readPoolSize > 0 ? pooled(hosts, readPoolSize, readPoolSize) : undefined;
    if (reads) await opened(reads, readPoolSize);
    const store = new PostgresStore(pooled(hosts, options.poolSize), reads, replicas, options.timeoutMs, options, warnings, migrated);
    await store.registry.start();
    return store;
  }

  /** Ready means connected to a writable primary: a standby (in recovery), or a read-only primary, answers but cannot take a write. */
  async ping(): Promise<void> {
    const deadline = Date.now() + Math.min(PING_TIMEOUT_MS, this.timeoutMs);
    let client: pg.PoolClient;
    try {
      client = await this.pool.connectBy(deadline);
    } catch (error) {
      throw translatePgError(error);
    }
    try {
      const role = await sessionRole(client, deadline - Date.now());
      if (role.inRecovery || role.readOnly) throw new StoreUnavailableError(`${hostOf(client)} is ${describeRole(role)}, not a writable primary`);
      client.release();
    } catch (error) {
      client.release(true);
      throw translatePgError(error);
    }
  }

  async close(): Promise<void> {
    await this.registry.stop();
    await Promise.all(
      [this.pool, this.readPool, this.replicaPool].map(async (pool) => {
        if (pool && !pool.ended && !pool.ending) await pool.end();
      }),
    );
  }
}

/** Opens `count` connections of `pool` and leaves them idle in it; one that fails is opened again when needed. */
async function opened(pool: FailoverPool, count: number): Promise<void> {
  const clients = await Promise.allSettled(Array.from({ length: count }, () => pool.connect()));
  for (const client of clients) if (client.status === 'fulfilled') client.value.release();
}

/**
 * The trigram index of name search is made by the migration plant_search only where pg_trgm could be
 * created; without it, GET /plants?q= scans the plants (correct, slower), which the operator is told.
 */
async function checkSearchIndex(client: pg.ClientBase): Promise<string[]> {
  const { rows } = await client.query<{ indexed: boolean }>("SELECT to_regclass('plants_name_fold_trgm') IS NOT NULL AS indexed");
  return rows[0]?.indexed
    ? []
    : [
        'pg_trgm is not installed in this database (the service could not create it): searches by name (GET /plants?q=) scan every plant ' +
          'instead of using a trigram index; to add it, see docs/finding-plants.md',
      ];
}

function hostsOf(url: string, fallback: 'primary' | 'any', timeoutMs: number): Hosts {
  const parsed = parsePostgresUrl(url);
  return new Hosts(parsed, parsed.sessionAttrs ?? fallback, timeoutMs);
}
