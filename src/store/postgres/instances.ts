import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type pg from 'pg';
import { VERSION } from '../../version.js';
import type { Query } from './query.js';

/**
 * The registry of the processes on one database (the `instances` table): each process that opens the
 * store (a server, each of its workers, a CLI command while it runs) says which release it runs and the
 * newest migration its code knows, and says again every HEARTBEAT_MS; it deletes its row as it closes
 * the store. A contracting migration (store/migration.ts) waits until no process seen within LIVE_MS knows
 * fewer migrations than it (migrate.ts). A process killed without closing leaves its row, which counts
 * until LIVE_MS has passed and is deleted by another process after FORGET_MS. Advisory: a beat the
 * database refuses (an outage) is tried again at the next, and never fails a request.
 */

export const HEARTBEAT_MS = 5000;
/** Six beats missed: the process is gone (or cut off from the database, which does it no harm). */
export const LIVE_MS = 30_000;
const FORGET_MS = 3_600_000;

/** Now, in epoch milliseconds, by the database's clock: one clock for every process's rows. */
const NOW_MS = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

export interface RegisteredInstance {
  id: string;
  host: string;
  pid: number;
  release: string;
  schema: number;
  /** How long ago it was last seen, in milliseconds. */
  seenMsAgo: number;
}

export class InstanceRegistry {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly query: Query,
    /** The newest migration this process's code knows. */
    private readonly schema: number,
  ) {}

  /** Registers this process (its first beat, awaited) and keeps its row fresh until stop(). */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat(), HEARTBEAT_MS);
    // The registry never keeps a process alive: a CLI command ends when its work does.
    this.timer.unref();
  }

  private beat(): Promise<void> {
    this.beating ??= (async () => {
      try {
        await this.query(
          `INSERT INTO instances (id, host, pid, release, schema, started_at, seen_at) VALUES ($1, $2, $3, $4, $5, ${NOW_MS}, ${NOW_MS})
           ON CONFLICT (id) DO UPDATE SET seen_at = EXCLUDED.seen_at`,
          [this.id, hostname(), process.pid, VERSION, this.schema],
        );
        await this.query(`DELETE FROM instances WHERE seen_at < ${NOW_MS} - $1`, [FORGET_MS]);
      } catch {
        // The next beat tries again; meanwhile the row ages, which holds a contract a little longer, no more.
      } finally {
        this.beating = undefined;
      }
    })();
    return this.beating;
  }

  /** Stops beating and deletes this process's row: a process that has closed the store runs nothing on it. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    await this.beating;
    await this.query('DELETE FROM instances WHERE id = $1', [this.id]).catch(() => undefined);
  }
}

/** The processes seen within LIVE_MS, oldest release first; none when the registry does not exist yet. */
export async function liveInstances(client: pg.ClientBase): Promise<RegisteredInstance[]> {
  const exists = await client.query<{ table: string | null }>("SELECT to_regclass('instances')::text AS table");
  if (exists.rows[0]?.table == null) return [];
  const { rows } = await client.query<{ id: string; host: string; pid: number; release: string; schema: number; ago: string }>(
    `SELECT id, host, pid, release, schema, ${NOW_MS} - seen_at AS ago FROM instances WHERE seen_at >= ${NOW_MS} - $1 ORDER BY schema, id`,
    [LIVE_MS],
  );
  return rows.map((row) => ({ id: row.id, host: row.host, pid: row.pid, release: row.release, schema: row.schema, seenMsAgo: Number(row.ago) }));
}
