import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { Registry } from 'prom-client';
import type { Config } from '../config/config.js';
import type { BackupObserver } from '../metrics/backups.js';
import { sqlitePath } from '../store/database-url.js';
import { backupSqlite } from '../store/sqlite/backup/backup.js';
import { makePrivateDir } from '../store/sqlite/private-files.js';
import { backupName, listBackups, prune } from './names.js';

/**
 * The server's scheduled backups (BACKUP_DIR, BACKUP_INTERVAL, BACKUP_KEEP), taken by one process: the
 * server, or the primary with WEB_CONCURRENCY > 1. Each is the same backup as `plant-store backup`
 * (store/sqlite/backup/), in a child process, so the event loop never waits for it and writes go on
 * (WAL). One backup at a time: the next is due an interval after the start of the last, counted from
 * the newest backup in the directory, so that restarts neither delay nor repeat one. A failure is logged
 * and counted, and the next attempt is at the next interval; nothing here can stop the server.
 */

export interface ScheduleSettings {
  dir: string;
  intervalSeconds: number;
  keep: number;
}

/** What the schedule logs through (pino's shape). */
export interface ScheduleLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** setTimeout's longest wait (about 24.8 days); a longer wait is made of several. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** An interval as BACKUP_INTERVAL spells it: 6h, 30m, 1d, 90s. */
function spelled(seconds: number): string {
  const [unit, size] = (
    [
      ['d', 86_400],
      ['h', 3600],
      ['m', 60],
    ] as const
  ).find(([, size]) => seconds % size === 0) ?? ['s', 1];
  return `${seconds / size}${unit}`;
}

export class BackupSchedule {
  private readonly dir: string;
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly abort = new AbortController();
  /** No backup is begun from now on (held), the one running, if any, left to finish. */
  private held = false;

  constructor(
    private readonly storePath: string,
    private readonly settings: ScheduleSettings,
    private readonly log: ScheduleLog,
    private readonly observer?: BackupObserver,
  ) {
    this.dir = resolve(settings.dir);
    this.intervalMs = settings.intervalSeconds * 1000;
  }

  /**
   * Makes the directory (an unusable one stops the start, naming BACKUP_DIR) and schedules the first
   * backup: at once when the directory holds none of this store's backups.
   */
  async start(): Promise<void> {
    try {
      // Private when made here (0700): backups hold the webhook secrets in clear.
      makePrivateDir(this.dir);
      await access(this.dir, constants.W_OK);
    } catch (error) {
      throw new Error(`BACKUP_DIR: cannot write backups into ${this.dir} (${(error as NodeJS.ErrnoException).code ?? messageOf(error)})`, {
        cause: error,
      });
    }
    const newest = (await listBackups(this.dir, this.storePath)).at(-1);
    this.observer?.found(newest?.takenAt);
    // Never further off than one interval (a backup named in the future: the clock was set back).
    const due = newest === undefined ? Date.now() : Math.min(newest.takenAt + this.intervalMs, Date.now() + this.intervalMs);
    this.schedule(due);
    this.log.info(
      {
        dir: this.dir,
        intervalSeconds: this.settings.intervalSeconds,
        keep: this.settings.keep,
        next: new Date(Math.max(due, Date.now())).toISOString(),
      },
      `backups of the store every ${spelled(this.settings.intervalSeconds)} into ${this.dir}, the newest ${this.settings.keep} kept`,
    );
  }

  /**
   * Begins no more backups, and lets the one running, if any, finish: a worker leaving (a reload's, whose
   * successor takes the schedule over at its start, or the service stopping) took the same backup as its
   * successor, or met its file ("exists already") and counted a failure, for as long as it lingered.
   */
  hold(): void {
    this.held = true;
    clearTimeout(this.timer);
  }

  /** Stops the schedule; a backup in progress is ended at once and its partial file removed. */
  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.abort.abort();
    await this.running;
  }

  private schedule(at: number): void {
    if (this.abort.signal.aborted || this.held) return;
    const wait = Math.max(0, at - Date.now());
    this.timer = setTimeout(() => (wait > MAX_TIMER_MS ? this.schedule(at) : this.run()), Math.min(wait, MAX_TIMER_MS));
    // The server's listener keeps the process alive, not a backup due in six hours.
    this.timer.unref();
  }

  private run(): void {
    const startedAt = Date.now();
    this.running = this.takeOne(startedAt).finally(() => {
      this.running = undefined;
      this.schedule(startedAt + this.intervalMs);
    });
  }

  /** One backup, logged and counted; never rejects. */
  private async takeOne(startedAt: number): Promise<void> {
    const target = join(this.dir, backupName(this.storePath, new Date(startedAt)));
    try {
      const result = await backupSqlite(this.storePath, target, { signal: this.abort.signal });
      this.observer?.taken({ ok: true, at: startedAt, seconds: result.seconds, bytes: result.bytes });
      const pruned = await prune(this.dir, this.storePath, this.settings.keep, basename(result.file)).catch((error: unknown) => {
        this.log.warn({ err: error, dir: this.dir }, `could not delete old backups: ${messageOf(error)}`);
        return [];
      });
      this.log.info(
        { file: result.file, bytes: result.bytes, plants: result.plants, seconds: Number(result.seconds.toFixed(3)), pruned },
        `backup taken: ${result.file} (${result.plants} plants, ${(result.bytes / 2 ** 20).toFixed(1)} MiB, ${result.seconds.toFixed(1)} s)`,
      );
    } catch (error) {
      // Stopping ends a backup on purpose: that is no failure.
      if (this.abort.signal.aborted) return;
      this.observer?.taken({ ok: false, at: startedAt, seconds: (Date.now() - startedAt) / 1000 });
      this.log.error(
        { err: error, file: target },
        `backup failed: ${messageOf(error)}; the next attempt is in ${spelled(this.settings.intervalSeconds)}`,
      );
    }
  }
}

/** The schedule BACKUP_DIR asks for, started (its metrics in `registry`); undefined when backups are off. */
export async function startBackups(config: Config, log: ScheduleLog, registry: Registry | undefined): Promise<BackupSchedule | undefined> {
  if (config.backupDir === '') return undefined;
  const settings = { dir: config.backupDir, intervalSeconds: config.backupIntervalSeconds, keep: config.backupKeep };
  // prom-client is loaded only when metrics are on: it and what it loads are a good share of an idle
  // process's memory (measured in bench/RESULTS.md).
  const observer = registry && (await import('../metrics/backups.js')).backupMetrics(registry);
  const schedule = new BackupSchedule(sqlitePath(config.databaseUrl), settings, log, observer);
  await schedule.start();
  return schedule;
}
