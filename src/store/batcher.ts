import { StoreBusyError, StoreUnavailableError } from './store.js';

/**
 * The one batching mechanism of the store: work that arrives together, sent together. While
 * `maxInFlight` batches run, new items wait and form the next batch, sent the moment one finishes, so
 * batches grow with the load; a lone item goes at once, after the I/O callbacks of its turn
 * (setImmediate), so items parsed in the same turn share a batch. The SQLite writer thread
 * (sqlite/writer/thread.ts), the SQLite reads of one turn (sqlite/turn-reads.ts), the PostgreSQL group
 * commit (postgres/group-commit.ts) and its gathered reads (postgres/lookups.ts) all run on it.
 */
export interface BatcherSettings {
  /** Batches running at once, at most. */
  maxInFlight: number;
  /** Items in one batch, at most. */
  maxBatch: number;
  /** Items waiting for a batch, at most (WRITE_QUEUE_LIMIT): beyond, `add` throws StoreBusyError. None: no limit. */
  queueLimit?: number | undefined;
}

export class Batcher<T> {
  private queue: T[] = [];
  private inFlight = 0;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly settings: BatcherSettings,
    /** Runs one batch; it must settle every item itself, and never reject. */
    private readonly run: (batch: T[]) => Promise<void>,
  ) {}

  /** Items waiting for a batch. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Queues an item for the next batch; throws StoreBusyError when `queueLimit` items wait already. */
  add(item: T): void {
    const limit = this.settings.queueLimit;
    if (limit !== undefined && this.queue.length >= limit) throw new StoreBusyError(limit);
    this.queue.push(item);
    if (!this.scheduled && this.inFlight < this.settings.maxInFlight) {
      this.scheduled = true;
      setImmediate(this.send);
    }
  }

  /** Resolves once nothing waits and no batch runs (at once if so now). */
  idle(): Promise<void> {
    if (this.inFlight === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private readonly send = (): void => {
    this.scheduled = false;
    while (this.inFlight < this.settings.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.length <= this.settings.maxBatch ? this.queue : this.queue.slice(0, this.settings.maxBatch);
      this.queue = batch === this.queue ? [] : this.queue.slice(batch.length);
      this.inFlight++;
      void this.run(batch).finally(this.finished);
    }
    if (this.inFlight === 0 && this.queue.length === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  };

  private readonly finished = (): void => {
    this.inFlight--;
    this.send();
  };
}

/** An item whose caller waits until `deadline` (epoch ms), and is told `reject` when it stops waiting. */
export interface Waiting {
  deadline: number;
  reject: (error: unknown) => void;
}

/**
 * The items of a batch whose callers still wait, and the earliest of their deadlines (by which the
 * batch must end); the others are failed with StoreUnavailableError(`message`) and not sent.
 */
export function stillWaiting<T extends Waiting>(items: T[], message: string): { live: T[]; deadline: number } {
  const now = Date.now();
  const live: T[] = [];
  let deadline = Infinity;
  for (const item of items) {
    if (item.deadline > now) {
      live.push(item);
      deadline = Math.min(deadline, item.deadline);
    } else {
      item.reject(new StoreUnavailableError(message));
    }
  }
  return { live, deadline };
}
