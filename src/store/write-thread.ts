import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { StoreBusyError, StoreUnavailableError, type CommitObserver } from './store.js';
import type { ClassifiedError } from './sqlite-rows.js';
import type { BatchReply, WriteKind, WriteOf, WriteResults, WriterSettings } from './sqlite-writes.js';

/**
 * The one way SQLite writes are made: group commit on a writer thread. With synchronous=FULL every
 * commit waits for an fsync (about 3 ms on an ordinary disk); done on the main thread that wait would
 * stop all serving. Writes go to a worker thread with its own connection: writes that arrive while a
 * batch is committing form the next batch, sent the moment the previous one has committed. Each
 * caller's promise settles only after its batch has committed; if the batch fails, every write in it
 * fails. At most `queueLimit` writes wait; beyond, a write is refused at once (StoreBusyError, a 503)
 * instead of growing memory.
 */

interface Pending {
  op: WriteOf<WriteKind>;
  resolve: (value: WriteResults[WriteKind]) => void;
  reject: (error: unknown) => void;
}

const WRITER_JS = new URL('./sqlite-writer.js', import.meta.url);

/** SQLite's error as the writer thread reported it: its message and result code (logged with the 503 or 500). */
class SqliteWriteError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'SqliteWriteError';
  }
}

/** The error a caller sees for a batch that did not commit: an outage is StoreUnavailableError (503), anything else a bug (500). */
function batchError(error: ClassifiedError): Error {
  const cause = new SqliteWriteError(error.message, error.code);
  return error.unavailable ? new StoreUnavailableError(`SQLite: ${error.code}`, { cause }) : cause;
}

export class WriteThread {
  private queue: Pending[] = [];
  private inFlight: Pending[] | undefined;
  private scheduled = false;
  private worker: Worker | undefined;
  private closing: Promise<void> | undefined;
  private idleWaiters: Array<() => void> = [];
  private readonly queuedListeners: Array<() => void> = [];
  /** When the batch in flight was sent to the thread (only measured when someone observes commits). */
  private sentAt = 0;

  constructor(
    private readonly settings: WriterSettings,
    private readonly queueLimit: number,
    /** Told of each committed batch: its writes and the time from sending it to the thread's reply. */
    private readonly onCommit?: CommitObserver,
  ) {}

  write<K extends WriteKind>(op: WriteOf<K>): Promise<WriteResults[K]> {
    if (this.closing) return Promise.reject(new StoreUnavailableError('the store is closed'));
    if (this.queue.length >= this.queueLimit) return Promise.reject(new StoreBusyError(this.queueLimit));
    return new Promise<WriteResults[K]>((resolve, reject) => {
      this.queue.push({ op, resolve: resolve as Pending['resolve'], reject });
      if (this.inFlight === undefined && !this.scheduled) {
        this.scheduled = true;
        // setImmediate runs after the I/O callbacks of this turn, so requests parsed in the same turn
        // join the batch.
        setImmediate(this.send);
      }
    });
  }

  /** Calls `listener` after every batch that queued webhook messages for delivery. */
  onQueued(listener: () => void): void {
    this.queuedListeners.push(listener);
  }

  /** Waits for every write accepted so far, then stops the thread. Every caller, however many, gets the same promise. */
  close(): Promise<void> {
    return (this.closing ??= this.shutdown());
  }

  private async shutdown(): Promise<void> {
    if (this.inFlight !== undefined || this.queue.length > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    const worker = this.worker;
    this.worker = undefined;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref();
    worker.postMessage('close');
    await exited;
  }

  private readonly send = (): void => {
    this.scheduled = false;
    if (this.inFlight !== undefined || this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.inFlight = batch;
    const worker = (this.worker ??= this.start());
    // Keep the process alive only while a batch is out, so a forgotten store never holds it open.
    worker.ref();
    if (this.onCommit) this.sentAt = performance.now();
    worker.postMessage(batch.map((pending) => pending.op));
  };

  private start(): Worker {
    // A small young generation: the thread's garbage is short-lived (each batch's messages), and a bulk
    // import would otherwise let it grow by tens of MB.
    const worker = new Worker(WRITER_JS, { workerData: this.settings, resourceLimits: { maxYoungGenerationSizeMb: 4 } });
    worker.on('message', (reply: BatchReply) => this.settle(reply));
    worker.on('error', (error) => this.fail(worker, error));
    worker.on('exit', (code) => this.fail(worker, new Error(`the SQLite writer thread exited (code ${code})`)));
    return worker;
  }

  private settle(reply: BatchReply): void {
    const batch = this.inFlight ?? [];
    this.inFlight = undefined;
    if (reply.ok) {
      this.onCommit?.(batch.length, (performance.now() - this.sentAt) / 1000);
      for (let i = 0; i < batch.length; i++) batch[i]!.resolve(reply.results[i]!);
      if (reply.queued > 0) for (const listener of this.queuedListeners) listener();
    } else {
      const error = batchError(reply.error);
      for (const pending of batch) pending.reject(error);
    }
    this.next();
  }

  /** The thread died (it could not open the database, say): its writes fail as unavailable; the next write starts a new one. */
  private fail(worker: Worker, cause: unknown): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const error = new StoreUnavailableError(`SQLite writer thread failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    for (const pending of this.inFlight ?? []) pending.reject(error);
    this.inFlight = undefined;
    this.next();
  }

  private next(): void {
    if (this.queue.length > 0) return this.send();
    this.worker?.unref();
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
