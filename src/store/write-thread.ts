import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { PlantId } from '../plants/schema.js';
import { StoreUnavailableError } from './store.js';

/**
 * Group commit on a writer thread. With synchronous=FULL every commit waits for an fsync (about 3 ms on
 * an ordinary disk); done on the main thread that wait stops all serving. Here the plant writes go to
 * a worker thread with its own connection: writes that arrive while a batch is committing form the
 * next batch, which is sent the moment the previous one has committed. Each caller's promise settles
 * only after its batch has committed; if the batch fails, every write in it fails.
 */

export type WriteOp =
  | readonly ['put', PlantId, string, string | null, boolean]
  | readonly ['patch', PlantId, string | undefined, string | null | undefined]
  | readonly ['delete', PlantId];

export type WriterReply = { results: unknown[] } | { error: { message: string; code: string | undefined } };

export interface WriterSettings {
  path: string;
  synchronous: 'FULL' | 'NORMAL';
  busyTimeoutMs: number;
}

interface Pending {
  op: WriteOp;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

const WRITER_JS = new URL('./sqlite-writer.js', import.meta.url);

export class WriteThread {
  private queue: Pending[] = [];
  private inFlight: Pending[] | undefined;
  private scheduled = false;
  private worker: Worker | undefined;
  private closed = false;
  private drained: (() => void) | undefined;

  constructor(
    private readonly settings: WriterSettings,
    private readonly translate: (error: unknown) => unknown,
  ) {}

  write<T>(op: WriteOp): Promise<T> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('the store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ op, resolve: resolve as (value: unknown) => void, reject });
      if (this.inFlight === undefined && !this.scheduled) {
        this.scheduled = true;
        // setImmediate runs after the I/O callbacks of this turn, so requests parsed in the same turn
        // join the batch.
        setImmediate(this.send);
      }
    });
  }

  /** Waits for every write accepted so far, then stops the thread. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.inFlight !== undefined || this.queue.length > 0) await new Promise<void>((resolve) => (this.drained = resolve));
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
    worker.postMessage(batch.map((pending) => pending.op));
  };

  private start(): Worker {
    const worker = new Worker(WRITER_JS, { workerData: this.settings });
    worker.on('message', (reply: WriterReply) => this.settle(reply));
    worker.on('error', (error) => this.fail(worker, error));
    worker.on('exit', (code) => this.fail(worker, new Error(`the SQLite writer thread exited (code ${code})`)));
    return worker;
  }

  private settle(reply: WriterReply): void {
    const batch = this.inFlight ?? [];
    this.inFlight = undefined;
    if ('error' in reply) {
      const { message, code } = reply.error;
      const error = this.translate(code === undefined ? new Error(message) : new Database.SqliteError(message, code));
      for (const pending of batch) pending.reject(error);
    } else {
      for (let i = 0; i < batch.length; i++) batch[i]!.resolve(reply.results[i]);
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
    if (this.queue.length > 0) this.send();
    else {
      this.worker?.unref();
      this.drained?.();
    }
  }
}
