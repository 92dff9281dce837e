import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { batcher, stillWaiting, type Batcher, type BatchTracer } from '../../batcher.js';
import { StoreUnavailableError, type BatchCounts, type CommitObserver } from '../../store.js';
import type { ClassifiedError } from '../errors.js';
import type { StoreHealth } from '../health.js';
import type { BatchLockWait, BatchReply, IndexFailure, WriteKind, WriteOf, WriteOp, WriteResults, WriterSettings } from './protocol.js';
import { builtFile } from '../../../built.js';

/**
 * The main thread's side of the SQLite writer thread: the one way SQLite writes are made, group commit.
 * With synchronous=FULL every commit waits for an fsync (a few milliseconds on an ordinary disk); done on
 * the main thread that wait would stop all serving. Writes go to a worker thread (worker.ts) with its own
 * connection, as messages (protocol.ts), batched by the store's batcher with one batch in flight: writes
 * that arrive while a batch is committing form the next batch, sent the moment the previous one has
 * committed. Each caller's promise settles only after its batch has committed; if the batch fails, every
 * write in it fails. At most `queueLimit` writes wait; beyond, a write is refused at once (StoreBusyError,
 * a 503) instead of growing memory.
 */

/** How far past its DB_TIMEOUT_MS a write's wait for the lock may go, so that a batch sent at once says nothing of it. */
const LOCK_WAIT_SLACK_MS = 50;

interface Pending {
  op: WriteOf<WriteKind>;
  /** Its caller waits until then (epoch ms: DB_TIMEOUT_MS from its arrival); not sent after it. */
  deadline: number;
  resolve: (value: WriteResults[WriteKind]) => void;
  reject: (error: unknown) => void;
  /** Its request's trace context (tracing on). */
  caller?: object | undefined;
}

/** The batch the thread is committing, and how to tell the batcher it is done (and, failed, why). */
interface InFlight {
  batch: Pending[];
  done: (error?: unknown) => void;
  /** When it was sent to the thread (only measured when someone observes commits). */
  sentAt: number;
}

const WORKER_JS = builtFile('src/store/sqlite/writer/worker.js');

/** The writer thread's old generation at most (start()). Reaching it ends the thread: its batch fails as unavailable, the next starts a new one. */
const WRITER_OLD_GENERATION_MB = 512;

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

/**
 * The error a caller sees for a batch that did not commit: an outage is StoreUnavailableError (503),
 * reported by the store's health (logged once as it begins, not with each refusal), anything else a bug (500).
 */
function batchError(error: ClassifiedError): Error {
  const cause = new SqliteWriteError(error.message, error.code);
  return error.unavailable ? new StoreUnavailableError(`SQLite: ${error.code}`, { cause, reported: true }) : cause;
}

export class WriteThread {
  private readonly batcher: Batcher<Pending>;
  private inFlight: InFlight | undefined;
  private worker: Worker | undefined;
  private closing: Promise<void> | undefined;
  private readonly queuedListeners: Array<() => void> = [];
  private readonly recordedListeners: Array<() => void> = [];
  private readonly indexFailureListeners: Array<(message: string) => void> = [];

  constructor(
    private readonly settings: WriterSettings,
    /** Told of every batch that commits or fails as unavailable; asked, before a batch is sent, whether the file is still there. */
    private readonly health: StoreHealth,
    queueLimit: number,
    /** Told of each committed batch: its writes and the time from sending it to the thread's reply. */
    private readonly onCommit?: CommitObserver,
    /** Traces each batch (tracing on); plant writes then carry their request's traceparent to their webhook messages. */
    private readonly tracer?: BatchTracer,
  ) {
    // One batch at a time: the thread commits them in order, and writes arriving meanwhile gather.
    this.batcher = batcher({ maxInFlight: 1, maxBatch: Infinity, queueLimit }, (batch) => this.send(batch), tracer);
  }

  /** The batches sent to the thread so far and the writes in them (a live view). */
  get batches(): Readonly<BatchCounts> {
    return this.batcher.sent;
  }

  write<K extends WriteKind>(op: WriteOf<K>): Promise<WriteResults[K]> {
    if (this.closing) return Promise.reject(new StoreUnavailableError('the store is closed'));
    // A full queue throws StoreBusyError here, which rejects the promise.
    const deadline = Date.now() + this.settings.busyTimeoutMs;
    return new Promise<WriteResults[K]>((resolve, reject) => this.batcher.add({ op, deadline, resolve: resolve as Pending['resolve'], reject }));
  }

  /** Calls `listener` after every batch that queued webhook messages for delivery. */
  onQueued(listener: () => void): void {
    this.queuedListeners.push(listener);
  }

  /** Calls `listener` when the search index fails to take a step (writer/search-index.ts), once until one succeeds. */
  onIndexFailure(listener: (message: string) => void): void {
    this.indexFailureListeners.push(listener);
  }

  /** Calls `listener` after every batch that recorded events in the change feed. */
  onRecorded(listener: () => void): void {
    this.recordedListeners.push(listener);
  }

  /**
   * Starts the thread before any write, for the work it does of its own accord: catching the search index
   * up with what the last run left (writer/search-index.ts). It holds the process no more than when idle.
   * Should it not start, the first write tries again and fails as unavailable.
   */
  wake(): void {
    if (this.closing || this.worker) return;
    try {
      this.worker = this.start();
      this.worker.unref();
    } catch {
      this.worker = undefined;
    }
  }

  /** Waits for every write accepted so far, then stops the thread. Every caller, however many, gets the same promise. */
  close(): Promise<void> {
    return (this.closing ??= this.shutdown());
  }

  private async shutdown(): Promise<void> {
    await this.batcher.idle();
    const worker = this.worker;
    this.worker = undefined;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref();
    worker.postMessage('close');
    await exited;
  }

  private send(waiting: Pending[]): Promise<unknown> {
    return new Promise<unknown>((done) => {
      // DB_TIMEOUT_MS bounds each write's whole wait, as PostgreSQL's group commit does: a write whose time
      // passed in the queue (behind a batch that waited for the lock) is refused unsent, never committed
      // after its 503; the batch waits for the lock only for what is left to its oldest write.
      const { live: batch, deadline } = stillWaiting(waiting, `SQLite: not committed within DB_TIMEOUT_MS (${this.settings.busyTimeoutMs} ms)`);
      if (batch.length === 0) {
        done(undefined);
        return;
      }
      // The store's file deleted or replaced: the thread would commit into what the next start never sees.
      const gone = this.health.fileRefusal();
      if (gone !== undefined) {
        for (const pending of batch) pending.reject(gone);
        done(gone);
        return;
      }
      try {
        const worker = (this.worker ??= this.start());
        // Keep the process alive only while a batch is out, so a forgotten store never holds it open.
        worker.ref();
        this.inFlight = { batch, done, sentAt: this.onCommit ? performance.now() : 0 };
        // Told only when its oldest write has waited in the queue (behind a batch that waited for the lock):
        // a batch sent at once waits busy_timeout as set, within LOCK_WAIT_SLACK_MS of its bound, and costs
        // no second message nor a PRAGMA in the thread (every write pays for those otherwise).
        if (deadline - Date.now() < this.settings.busyTimeoutMs - LOCK_WAIT_SLACK_MS) {
          const lockWait: BatchLockWait = { lockWaitUntil: deadline };
          worker.postMessage(lockWait);
        }
        const tracer = this.tracer;
        worker.postMessage(tracer ? batch.map((pending) => traced(pending, tracer)) : batch.map((pending) => pending.op));
      } catch (error) {
        // No thread to send to (it cannot start): the batch fails as unavailable, the next one tries again.
        this.inFlight = undefined;
        const unavailable = new StoreUnavailableError('SQLite writer thread cannot start', { cause: error, reported: true });
        this.health.failed(unavailable);
        for (const pending of batch) pending.reject(unavailable);
        done(unavailable);
      }
    });
  }

  private start(): Worker {
    // A small young generation: the thread's garbage is short-lived (each batch's messages), and a bulk
    // import would otherwise let it grow by tens of MB. And a bounded old one: V8 lets an old generation
    // grow to up to 4 times what was live at its last full collection when its limit is the default (GBs),
    // under 1.5 times when it is 512 MB, which the thread's live data (some MB: a batch of writes, a chunk
    // of an import) never comes near. A 200 MB import's commit: the thread's heap 32 MB at most, now 20.
    const worker = new Worker(WORKER_JS, {
      workerData: this.settings,
      resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: WRITER_OLD_GENERATION_MB },
    });
    worker.on('message', (message: BatchReply | IndexFailure) => {
      if ('indexFailed' in message) for (const listener of this.indexFailureListeners) listener(message.indexFailed);
      else this.settle(message);
    });
    worker.on('error', (error) => this.fail(worker, error));
    worker.on('exit', (code) => this.fail(worker, new Error(`the SQLite writer thread exited (code ${code})`)));
    return worker;
  }

  private settle(reply: BatchReply): void {
    const inFlight = this.inFlight;
    if (!inFlight) return;
    this.inFlight = undefined;
    const { batch } = inFlight;
    let error: Error | undefined;
    if (reply.ok) {
      if (reply.nothingWritten !== true) this.health.committed();
      this.onCommit?.(batch.length, (performance.now() - inFlight.sentAt) / 1000);
      for (let i = 0; i < batch.length; i++) batch[i]!.resolve(reply.results[i]!);
      if (reply.queued > 0) for (const listener of this.queuedListeners) listener();
      if (reply.recorded > 0) for (const listener of this.recordedListeners) listener();
    } else {
      error = batchError(reply.error);
      if (error instanceof StoreUnavailableError) this.health.failed(error);
      for (const pending of batch) pending.reject(error);
    }
    this.finish(inFlight, error);
  }

  /** The thread died (it could not open the database, say): its writes fail as unavailable; the next write starts a new one. */
  private fail(worker: Worker, cause: unknown): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const inFlight = this.inFlight;
    if (!inFlight) return;
    this.inFlight = undefined;
    const error = new StoreUnavailableError(`SQLite writer thread failed: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
      reported: true,
    });
    this.health.failed(error);
    for (const pending of inFlight.batch) pending.reject(error);
    this.finish(inFlight, error);
  }

  private finish(inFlight: InFlight, error?: unknown): void {
    // Nothing more to write: let the process exit if nothing else holds it (the next batch refs it again).
    if (this.batcher.waiting === 0) this.worker?.unref();
    inFlight.done(error);
  }
}

/** A write as sent with tracing on: a plant write carries its request's traceparent (the messages it queues keep it). */
function traced({ op, caller }: Pending, tracer: BatchTracer): WriteOp {
  if (caller === undefined) return op;
  if (op.kind === 'keyed' && op.write.kind === 'put') return { ...op, write: { ...op.write, traceparent: tracer.traceparent(caller) } };
  if (op.kind !== 'put' && op.kind !== 'patch' && op.kind !== 'delete') return op;
  return { ...op, traceparent: tracer.traceparent(caller) };
}
