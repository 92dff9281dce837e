import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { int8, named, type Query, type QueryBy, type Transaction } from './query.js';
import { applyOne, applyPlainPuts, isPlainPut, needsTransaction } from './plant-writes.js';
import type { Applied, PlantWrite, PlantWriteResult } from './plant-write-sql.js';
import { batcher, stillWaiting, type Batcher, type BatchTracer } from '../batcher.js';
import type { BatchCounts, CommitObserver } from '../store.js';
import { applyKeyedPuts, isKeyedPut, isKeyedRunPut, type KeyedPut } from './keyed-puts.js';
import { ALONE, COMMIT_STATEMENT, type FeedContext } from './feed.js';

/**
 * Group commit on PostgreSQL. Writes that arrive together share one round trip and one transaction: while
 * `maxInFlight` batches are being committed, new writes wait and form the next batch, sent the moment a
 * batch finishes, so batches grow with the load and a lone write goes at once. Plain puts of distinct ids
 * (the common POST) become one multi-row upsert; any other write keeps its own statement inside the
 * batch's transaction, in arrival order, and the transaction ends by taking its place in the change feed
 * (postgres/feed.ts). Each caller is answered only after its batch committed; a batch that fails fails
 * every write in it (a deadlock between instances' batches is retried first).
 */

interface Pending {
  write: PlantWrite;
  /** When its caller stops waiting (epoch ms): asked + the store's timeout. */
  deadline: number;
  resolve: (result: PlantWriteResult) => void;
  reject: (error: unknown) => void;
  /** Its request's trace context (tracing on). */
  caller?: object | undefined;
}

/** A run of plain puts of distinct ids (one statement; or, all under distinct Idempotency-Keys, four), or one other write. */
type Segment = { puts: Pending[]; keyed: boolean } | { one: Pending };

export interface BatchSettings {
  /** Batches being committed at once, at most. */
  maxInFlight: number;
  /** Writes waiting for a batch, at most (WRITE_QUEUE_LIMIT): beyond, a write is refused at once (StoreBusyError, 503). */
  queueLimit: number;
  /** Writes in one batch, at most (bounds a statement's size). */
  maxBatch: number;
  /** The longest a write waits in all, for its batch and that batch's commit (DB_TIMEOUT_MS). */
  timeoutMs: number;
}

/** SQLSTATEs after which the whole transaction may simply run again: deadlock, serialization failure. */
const RETRYABLE = new Set(['40P01', '40001']);
const ATTEMPTS = 3;

function isRetryable(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof pg.DatabaseError) return RETRYABLE.has(cause.code ?? '');
  }
  return false;
}

/** Splits a batch, in order, into runs of plain puts whose ids differ (keyed and not apart, keys differing too), and single other writes. */
function segments(batch: Pending[]): Segment[] {
  const result: Segment[] = [];
  let puts: Pending[] = [];
  let keyedRun = false;
  let ids = new Set<string>();
  let keys = new Set<string>();
  const close = () => {
    if (puts.length > 0) result.push({ puts, keyed: keyedRun });
    puts = [];
    ids = new Set();
    keys = new Set();
  };
  for (const pending of batch) {
    const { write } = pending;
    const keyed = isKeyedRunPut(write);
    if (keyed || isPlainPut(write)) {
      if (keyed !== keyedRun) close();
      keyedRun = keyed;
      // The same plant twice in one upsert is not allowed (and each write must see the one before); so
      // for a key, whose second use must find the first's outcome.
      const id = String(write.plant.id);
      const key = keyed ? `${write.claim.owner}\u0000${write.claim.key}` : '';
      if (ids.has(id) || keys.has(key)) close();
      ids.add(id);
      if (keyed) keys.add(key);
      puts.push(pending);
    } else {
      close();
      result.push({ one: pending });
    }
  }
  close();
  return result;
}

/** Runs a segment; with a tracer, each write's messages keep its request's traceparent. */
function apply(query: Query, segment: Segment, feed: FeedContext, tracer: BatchTracer | undefined): Promise<Applied> {
  const traceOf = (pending: Pending) => (tracer && pending.caller ? tracer.traceparent(pending.caller) : undefined);
  if (!('puts' in segment)) {
    const { write } = segment.one;
    const trace = traceOf(segment.one);
    if (isKeyedPut(write)) return applyKeyedPuts(query, [write], feed, trace === undefined ? undefined : [trace]);
    return applyOne(query, write, feed, trace);
  }
  const puts = segment.puts.map((p) => p.write as Extract<PlantWrite, { kind: 'put' }>);
  const traces = tracer ? segment.puts.map((p) => traceOf(p) ?? null) : undefined;
  if (segment.keyed) return applyKeyedPuts(query, puts as KeyedPut[], feed, traces);
  return applyPlainPuts(
    query,
    puts.map((put) => put.plant),
    feed,
    traces,
  );
}

/** The plant id each write of a segment touches. */
function idsOf(segment: Segment): string[] {
  const writes = 'puts' in segment ? segment.puts.map((p) => p.write) : [segment.one.write];
  return writes.map((write) => int8(write.kind === 'put' ? write.plant.id : write.id));
}

/**
 * Locks the stored plants a batch of several statements touches, in id order, before its first statement.
 * Each statement locks its own rows in id order (the multi-row upsert sorts them), but the statements of a
 * batch follow their writes' arrival: a batch whose second statement wanted a plant that another
 * instance's batch held, while that batch waited on one this batch's first statement had taken, deadlocked,
 * and at a few hot ids the retries deadlocked again (503s). Taken in one order first, the locks are waited
 * for, not fought over.
 */
const LOCK_IN_ID_ORDER = named('plants_lock_in_order', 'SELECT 1 FROM plants WHERE id = ANY ($1::bigint[]) ORDER BY id FOR UPDATE');

/** The segments in one transaction, each recording its events after the ones before; the last statement takes the commit's place in the feed. */
async function applyAll(query: Query, parts: Segment[], tracer: BatchTracer | undefined): Promise<Applied[]> {
  const done: Applied[] = [];
  const feed: FeedContext = { key: null, base: 0, commits: false };
  if (parts.length > 1) await query(LOCK_IN_ID_ORDER, [[...new Set(parts.flatMap(idsOf))]]);
  for (const part of parts) {
    const applied = await apply(query, part, feed, tracer);
    done.push(applied);
    feed.key = applied.eventKey;
    feed.base += applied.events;
  }
  if (feed.base > 0) await query(COMMIT_STATEMENT, [feed.key]);
  return done;
}

export class PostgresWriteBatcher {
  private readonly batcher: Batcher<Pending>;

  constructor(
    private readonly queryBy: QueryBy,
    private readonly transaction: Transaction,
    private readonly settings: BatchSettings,
    /** Told, after each commit, how many messages it queued for delivery. */
    private readonly queued: (count: number) => void,
    /** Told after each commit that recorded events in the change feed. */
    private readonly recorded: () => void,
    /** Told of each batch committed: its writes, and the seconds from sending it to its commit (metrics). */
    private readonly onCommit?: CommitObserver,
    /** Traces each batch (tracing on); writes then carry their request's traceparent to their webhook messages. */
    private readonly tracer?: BatchTracer,
  ) {
    this.batcher = batcher(settings, (batch) => this.commit(batch), tracer);
  }

  /** The batches committed or being committed so far and the writes in them (a live view). */
  get batches(): Readonly<BatchCounts> {
    return this.batcher.sent;
  }

  write(write: PlantWrite): Promise<PlantWriteResult> {
    // A full queue (queueLimit) throws StoreBusyError here, which rejects the promise: a 503 at once.
    return new Promise((resolve, reject) => {
      this.batcher.add({ write, deadline: Date.now() + this.settings.timeoutMs, resolve, reject });
    });
  }

  /** Commits a batch; resolves with the error that failed it, if one did. */
  private async commit(waiting: Pending[]): Promise<unknown> {
    // A write whose caller's wait is over is not sent; the batch ends by its oldest write's deadline.
    const { live: batch, deadline } = stillWaiting(waiting, `PostgreSQL: not committed within DB_TIMEOUT_MS (${this.settings.timeoutMs} ms)`);
    if (batch.length === 0) return undefined;
    const parts = segments(batch);
    const started = performance.now();
    const first = parts[0]!;
    // One statement needs no transaction of its own: it is one.
    const alone = parts.length === 1 && ('puts' in first ? !first.keyed : !needsTransaction(first.one.write));
    for (let attempt = 1; ; attempt++) {
      try {
        const applied = alone
          ? [await apply(this.queryBy(deadline), first, ALONE, this.tracer)]
          : await this.transaction((query) => applyAll(query, parts, this.tracer), deadline);
        this.onCommit?.(batch.length, (performance.now() - started) / 1000);
        this.settle(parts, applied);
        return undefined;
      } catch (error) {
        if (attempt < ATTEMPTS && isRetryable(error) && Date.now() < deadline) continue;
        for (const pending of batch) pending.reject(error);
        return error;
      }
    }
  }

  private settle(parts: Segment[], applied: Applied[]): void {
    let queued = 0;
    let events = 0;
    parts.forEach((part, i) => {
      const { results } = applied[i]!;
      queued += applied[i]!.queued;
      events += applied[i]!.events;
      if ('puts' in part) part.puts.forEach((pending, j) => pending.resolve(results[j]!));
      else part.one.resolve(results[0]!);
    });
    if (queued > 0) this.queued(queued);
    if (events > 0) this.recorded();
  }
}
