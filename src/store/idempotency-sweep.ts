import type { IdempotencyStore } from './idempotency.js';

/**
 * The store's background work on Idempotency-Keys: the outcomes whose IDEMPOTENCY_KEY_TTL has passed are
 * deleted, a bounded batch at a time, so that writes wait for no more than one batch (a retry finds none
 * past its time to live either way: expired outcomes are never replayed). The process runs it as one of
 * its services (process/background.ts).
 */

/**
 * Outcomes deleted by one statement of a sweep at most: about 2 ms of SQLite's writer thread (measured
 * with a million rows), so a write queued behind a batch waits that long at most.
 */
export const SWEEP_BATCH = 500;

/** Where a sweep says what it did (the process's logger). */
export interface SweepLog {
  warn(details: object, message: string): void;
  debug(details: object, message: string): void;
}

/**
 * Deletes every expired outcome, `batch` at a time, each batch its own transaction, and between batches
 * lets the writes queued meanwhile go first (setImmediate: the batchers send what waits before the next
 * batch is asked for). Answers how many were deleted, in how many batches. Once `signal` is aborted (the
 * process stops, its store about to close) no further batch is asked for.
 */
export async function sweepExpired(
  keys: Pick<IdempotencyStore, 'deleteExpired'>,
  batch = SWEEP_BATCH,
  signal?: AbortSignal,
): Promise<{ deleted: number; batches: number }> {
  let deleted = 0;
  for (let batches = 1; ; batches++) {
    const n = await keys.deleteExpired(batch);
    deleted += n;
    if (n < batch || signal?.aborted) return { deleted, batches };
    await new Promise((resolve) => setImmediate(resolve));
    if (signal?.aborted) return { deleted, batches };
  }
}

/**
 * Sweeps at start and then every tenth of the time to live (at most every 10 minutes, at least every
 * second); a sweep still running when the next is due is not doubled. Answers a function that stops it.
 */
export function sweepExpiredKeys(keys: Pick<IdempotencyStore, 'deleteExpired'>, ttlMs: number, log: SweepLog): () => void {
  let sweeping = false;
  // Stopping ends a sweep under way too, after its batch: the store is closed next.
  const stopping = new AbortController();
  const sweep = async () => {
    if (sweeping) return;
    sweeping = true;
    try {
      const { deleted, batches } = await sweepExpired(keys, SWEEP_BATCH, stopping.signal);
      if (deleted > 0) log.debug({ deleted, batches }, 'idempotency: expired keys deleted');
    } catch (error) {
      if (!stopping.signal.aborted) log.warn({ err: error }, 'idempotency: could not delete expired keys');
    } finally {
      sweeping = false;
    }
  };
  void sweep();
  const timer = setInterval(() => void sweep(), Math.min(600_000, Math.max(1000, ttlMs / 10))).unref();
  return () => {
    stopping.abort();
    clearInterval(timer);
  };
}
