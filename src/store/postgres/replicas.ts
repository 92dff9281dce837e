import type pg from 'pg';
import { translatePgError } from './errors.js';
import type { FailoverPool } from './hosts/hosts.js';
import { poolQuery, type PlantReads, type Query } from './query.js';
import { StoreUnavailableError } from '../store.js';

/**
 * How far behind the primary a server is, in milliseconds: 0 for a primary, and for a standby that has
 * replayed everything it received; else the age of the last transaction it replayed. NULL (unknown, so
 * not used) for a standby cut off from its primary (no WAL receiver running: it may be behind by any
 * amount without knowing), or one that has replayed nothing yet.
 */
const LAG_QUERY = `SELECT CASE
    WHEN NOT pg_is_in_recovery() THEN 0
    WHEN NOT EXISTS (SELECT 1 FROM pg_stat_wal_receiver) THEN NULL
    WHEN pg_last_wal_replay_lsn() >= pg_last_wal_receive_lsn() THEN 0
    ELSE (extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000)::bigint
  END::text AS lag_ms`;

/** A replica's state is looked at again after this long, when a read comes. */
const RECHECK_MS = 1000;

export interface ReplicaOptions {
  /** A replica further behind than this is not read from. */
  maxLagMs: number;
  timeoutMs: number;
}

/**
 * Reads that may be a little behind (plant lists, counts, exports) go to the replicas of
 * DATABASE_READ_URL while one is up and close enough behind the primary; otherwise, and whenever a
 * replica read fails for want of the replica, to the primary, within the same deadline. A replica found
 * down or lagging is left alone until the next check, a second later.
 */
export class ReplicaReads {
  private usable = false;
  private checkedAt = -Infinity;
  private checking: Promise<void> | undefined;
  private readonly onReplica: Query;

  constructor(
    private readonly replicas: FailoverPool,
    /** The same reads on the primary (its connections for reads; an export's on the main pool). */
    private readonly primary: PlantReads,
    private readonly options: ReplicaOptions,
  ) {
    // A replica that does not answer gets half the time, so that the primary still has the other half.
    this.onReplica = poolQuery(replicas, Math.ceil(options.timeoutMs / 2));
  }

  readonly query: Query = async (text, values) => {
    if (await this.replicaUsable()) {
      try {
        return await this.onReplica(text, values);
      } catch (error) {
        if (!this.replicaDown(error)) throw error;
      }
    }
    return this.primary.query(text, values);
  };

  /** A connection for a read-only snapshot (an export): on a replica when one is usable. */
  async connect(): Promise<pg.PoolClient> {
    if (await this.replicaUsable()) {
      try {
        return await this.replicas.connectBy(Date.now() + Math.ceil(this.options.timeoutMs / 2));
      } catch (error) {
        if (!this.replicaDown(error)) throw translatePgError(error);
      }
    }
    return this.primary.connect();
  }

  /** Whether reads go to a replica now; looks again when the last look is a second old (without holding reads up, once it has looked). */
  private async replicaUsable(): Promise<boolean> {
    if (Date.now() - this.checkedAt >= RECHECK_MS) {
      this.checking ??= this.check().finally(() => (this.checking = undefined));
      if (this.checkedAt === -Infinity) await this.checking;
    }
    return this.usable;
  }

  private async check(): Promise<void> {
    try {
      const { rows } = await this.onReplica<{ lag_ms: string | null }>(LAG_QUERY, []);
      const lag = rows[0]?.lag_ms;
      this.usable = lag !== null && lag !== undefined && Number(lag) <= this.options.maxLagMs;
    } catch {
      this.usable = false;
    }
    this.checkedAt = Date.now();
  }

  /** A replica read failed: for want of the replica (then it is skipped until the next check), or for a reason the primary would share. */
  private replicaDown(error: unknown): boolean {
    const down = translatePgError(error) instanceof StoreUnavailableError;
    if (down) {
      this.usable = false;
      this.checkedAt = Date.now();
    }
    return down;
  }
}
