import { StoreUnavailableError } from './store.js';

/**
 * Work that arrives together, sent together: while `maxInFlight` batches run, new items wait and form the
 * next batch, sent the moment one finishes, so batches grow with the load; a lone item goes at once,
 * after the I/O callbacks of its turn (setImmediate), so items parsed in the same turn share a batch.
 * The group commit (postgres-batch.ts), the gathered reads (postgres-lookups.ts) and the SQLite reads of
 * one turn (turn-reads.ts) all run on it.
 */
export interface GatherSettings {
  /** Batches running at once, at most. */
  maxInFlight: number;
  /** Items in one batch, at most. */
  maxBatch: number;
}

export class Gather<T> {
  private queue: T[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly settings: GatherSettings,
    /** Runs one batch; it must settle every item itself, and never reject. */
    private readonly run: (batch: T[]) => Promise<void>,
  ) {}

  /** Items waiting for a batch. */
  get waiting(): number {
    return this.queue.length;
  }

  add(item: T): void {
    this.queue.push(item);
    if (!this.scheduled && this.inFlight < this.settings.maxInFlight) {
      this.scheduled = true;
      setImmediate(this.send);
    }
  }

  private readonly send = (): void => {
    this.scheduled = false;
    while (this.inFlight < this.settings.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.length <= this.settings.maxBatch ? this.queue : this.queue.slice(0, this.settings.maxBatch);
      this.queue = batch === this.queue ? [] : this.queue.slice(batch.length);
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        this.send();
      });
    }
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
