import { StoreBusyError, StoreUnavailableError, type BatchCounts } from './store.js';

/**
 * The one batching mechanism of the store: work that arrives together, sent together. While
 * `maxInFlight` batches run, new items wait and form the next batch, sent the moment one finishes, so
 * batches grow with the load; a lone item goes at once, after the I/O callbacks of its turn
 * (setImmediate), so items parsed in the same turn share a batch. The SQLite writer thread
 * (sqlite/writer/thread.ts), the SQLite reads of one turn (sqlite/gathered-reads.ts), the PostgreSQL group
 * commit (postgres/group-commit.ts) and its gathered reads (postgres/gathered-reads.ts) all run on it.
 */
export interface BatcherSettings {
  /** Batches running at once, at most. */
  maxInFlight: number;
  /** Items in one batch, at most. */
  maxBatch: number;
  /** Items waiting for a batch, at most (WRITE_QUEUE_LIMIT): beyond, `add` throws StoreBusyError. None: no limit. */
  queueLimit?: number | undefined;
}

/**
 * Tracing of one batcher's batches (tracing/batches.ts), given only when tracing is on; without it a
 * batcher does nothing but batch (no check per item either: `batcher` then makes a plain Batcher).
 */
export interface BatchTracer {
  /** The trace context of whoever adds an item now (its request's span), kept with the item; undefined outside any. */
  caller(): object | undefined;
  /**
   * Runs one batch: under a span of its own when a traced caller waits on it, and outside every caller's
   * context (work it sets off is nobody's request's). `run` resolves with the error that failed the batch, if one did.
   */
  run(items: readonly Traced[], run: () => Promise<unknown>): Promise<unknown>;
  /** A caller's context as a W3C traceparent, to keep with what it causes (webhook messages). */
  traceparent(caller: object): string;
}

/** What a batcher's batches are, naming their spans (`sqlite commit`, `postgresql lookup`). */
export interface BatchKind {
  system: 'sqlite' | 'postgresql';
  operation: 'commit' | 'reads' | 'lookup';
}

/** Makes the tracer of each batcher of a store (given to openStore when tracing is on). */
export type BatchTracing = (kind: BatchKind) => BatchTracer;

/** An item of a batcher: a traced one carries its caller's trace context (see BatchTracer). */
export interface Traced {
  caller?: object | undefined;
}

export class Batcher<T> {
  private queue: T[] = [];
  private readonly counts: BatchCounts = { batches: 0, items: 0 };
  private inFlight = 0;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly settings: BatcherSettings,
    /** Runs one batch; it must settle every item itself, and never reject. It resolves with the error that failed the whole batch, if one did (for its trace). */
    private readonly run: (batch: T[]) => Promise<unknown>,
  ) {}

  /** Items waiting for a batch. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Batches sent and their items so far (a live view): over a window, items per batch tells how many
   * gathered while the batch before ran, the queue that forms only when the database is the bottleneck.
   */
  get sent(): Readonly<BatchCounts> {
    return this.counts;
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
      this.counts.batches++;
      this.counts.items += batch.length;
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

/** Items carry their callers' trace context, and each batch runs under the tracer (BatchTracer.run). */
class TracedBatcher<T extends Traced> extends Batcher<T> {
  constructor(
    settings: BatcherSettings,
    run: (batch: T[]) => Promise<unknown>,
    private readonly tracer: BatchTracer,
  ) {
    super(settings, (batch) => tracer.run(batch, () => run(batch)));
  }

  override add(item: T): void {
    item.caller = this.tracer.caller();
    super.add(item);
  }
}

/** A batcher, traced when a tracer is given (tracing on), else a plain one. */
export function batcher<T extends Traced>(settings: BatcherSettings, run: (batch: T[]) => Promise<unknown>, tracer?: BatchTracer): Batcher<T> {
  return tracer ? new TracedBatcher(settings, run, tracer) : new Batcher(settings, run);
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
