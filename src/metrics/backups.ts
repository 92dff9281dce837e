import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * The scheduled backups' metrics (BACKUP_DIR), registered only when backups are on. They live in the one
 * process that takes the backups: the server, or with WEB_CONCURRENCY > 1 the primary, whose registry
 * is served beside the workers' sum (metrics/cluster.ts).
 */

export interface BackupOutcome {
  ok: boolean;
  /** When it began (epoch ms): the moment the copy is of, and the time in its name. */
  at: number;
  seconds: number;
  /** The backup's size (a successful one). */
  bytes?: number;
}

export interface BackupObserver {
  /** The newest backup found in the directory at start (epoch ms), before any is taken. */
  found(newestAt: number | undefined): void;
  /** One backup taken, or failed. */
  taken(outcome: BackupOutcome): void;
}

export function backupMetrics(registry: Registry): BackupObserver {
  const registers = [registry];
  const total = new Counter({
    name: 'plant_store_backups_total',
    help: 'Scheduled backups by outcome: ok (written, checked, fsynced and in place) or failed',
    labelNames: ['outcome'],
    registers,
  });
  for (const outcome of ['ok', 'failed']) total.inc({ outcome }, 0);
  const lastSuccess = new Gauge({
    name: 'plant_store_backup_last_success_timestamp_seconds',
    help: 'When the newest scheduled backup was taken (Unix time; at start, the newest found in BACKUP_DIR; 0: none yet)',
    aggregator: 'max',
    registers,
  });
  const duration = new Gauge({
    name: 'plant_store_backup_duration_seconds',
    help: 'How long the last scheduled backup took, copy, check and fsync included (a failed one too)',
    aggregator: 'max',
    registers,
  });
  const size = new Gauge({ name: 'plant_store_backup_size_bytes', help: 'Size of the newest scheduled backup', aggregator: 'max', registers });
  return {
    found: (newestAt) => lastSuccess.set(newestAt === undefined ? 0 : newestAt / 1000),
    taken: (outcome) => {
      total.inc({ outcome: outcome.ok ? 'ok' : 'failed' });
      duration.set(outcome.seconds);
      if (!outcome.ok) return;
      lastSuccess.set(outcome.at / 1000);
      if (outcome.bytes !== undefined) size.set(outcome.bytes);
    },
  };
}
