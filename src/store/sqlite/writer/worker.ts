import { parentPort, workerData } from 'node:worker_threads';
import type { PlantChange } from '../../../model/events.js';
import { configureConnection, openConnection, prepare } from '../connection.js';
import { classifySqliteError } from '../errors.js';
import { sqliteEventWrites } from './feed.js';
import { sqliteKeyWrites } from './idempotency.js';
import { sqliteSearchIndexer } from './search-index.js';
import { sqliteImports } from './imports.js';
import { sqlitePlantWrites, Versions } from './plant-writes.js';
import type { BatchLockWait, BatchReply, IndexFailure, WriteKind, WriteOf, WriteOp, WriteResults, WriterSettings } from './protocol.js';
import { sqliteTokenWrites } from './tokens.js';
import { sqliteWebhookWrites } from './webhooks.js';

/**
 * The SQLite writer thread (started by thread.ts): its own connection, one transaction per batch of
 * writes (protocol.ts), committed (and, with synchronous=FULL, fsynced) here so that the main thread
 * keeps serving while the disk flushes.
 */

const settings = workerData as WriterSettings;
const port = parentPort!;
const db = openConnection(settings.path);
configureConnection(db, settings);

/** The batch's time: its events' timestamp. */
let now = 0;
/** The plant changes of the batch not recorded yet (recorded at its end, or before an import's own). */
let changes: PlantChange[] = [];
let queued = 0;
let recorded = 0;

/**
 * The search index follows the writes (search-index.ts): a batch that recorded events schedules a step
 * INDEX_DELAY_MS later, so that the steps of a busy store each index many plants; a step that leaves
 * events behind is followed by the next at once. Writes that arrive meanwhile wait for one step at most.
 */
const INDEX_DELAY_MS = 50;
/** A step that failed (the file locked by another process for longer than busy_timeout, say) is tried again after this. */
const INDEX_RETRY_MS = 1000;
/** A process that writes the same file (the CLI, say) is not heard from: its writes are looked for this often. */
const INDEX_CHECK_MS = 1000;
/**
 * An index step waits for the file's lock (held by another process) this long at most, then is tried again
 * later: the writes that queue meanwhile wait behind it, and their DB_TIMEOUT_MS is theirs, not the index's.
 */
const INDEX_LOCK_WAIT_MS = 100;
/** Events an import's transaction indexes at a time. */
const IMPORT_INDEX_CHUNK = 50_000;
const search = sqliteSearchIndexer(db);
const indexStep = db.transaction(() => search.step());
let indexTimer: NodeJS.Timeout | undefined;
/** What busy_timeout is set to now: each transaction sets its own wait for the lock. */
let busyTimeoutMs = settings.busyTimeoutMs;
function waitForLock(ms: number): void {
  if (ms !== busyTimeoutMs) db.exec(`PRAGMA busy_timeout = ${(busyTimeoutMs = ms)}`);
}
/** The last step failed: the next failure is not told again. */
let failing = false;
/** Since when the steps have found the file locked by another process. */
let lockedSince: number | undefined;

/** The connection is closed: nothing is scheduled any more (a timer then would keep the thread alive, failing forever). */
let closed = false;

function scheduleIndexing(delayMs: number): void {
  if (!closed) indexTimer ??= setTimeout(indexSome, delayMs);
}

/**
 * One step of indexing, in a transaction of its own, which need not wait for the disk (synchronous=NORMAL):
 * should it be lost in a crash, its mark is lost with it and the step is done again.
 */
function indexSome(): void {
  indexTimer = undefined;
  let behind: number;
  try {
    if (search.behind() === 0) return;
    db.exec('PRAGMA synchronous = NORMAL');
    waitForLock(Math.min(INDEX_LOCK_WAIT_MS, settings.busyTimeoutMs));
    try {
      behind = indexStep.immediate();
    } finally {
      db.exec(`PRAGMA synchronous = ${settings.synchronous}`);
    }
  } catch (error) {
    // Searches stay exact meanwhile (they read what the index has not); the server logs why, once. A lock
    // held by another process is told only once held past DB_TIMEOUT_MS (a CLI's short write is no news).
    const locked = (error as { code?: unknown }).code === 'SQLITE_BUSY';
    lockedSince = locked ? (lockedSince ?? Date.now()) : undefined;
    const news = !locked || Date.now() - lockedSince! >= settings.busyTimeoutMs;
    if (!failing && news) port.postMessage({ indexFailed: error instanceof Error ? error.message : String(error) } satisfies IndexFailure);
    failing ||= news;
    scheduleIndexing(INDEX_RETRY_MS);
    return;
  }
  failing = false;
  lockedSince = undefined;
  if (behind > 0) scheduleIndexing(0);
}

/**
 * Indexes every event recorded so far, before the thread stops (an import the CLI ran, say). Should it
 * fail, the next start catches up.
 */
function indexAll(): void {
  clearTimeout(indexTimer);
  indexTimer = undefined;
  waitForLock(settings.busyTimeoutMs);
  try {
    while (indexStep.immediate() > 0);
  } catch {
    // Left for the next start, which reads from the mark.
  }
}

const versions = new Versions(db);
const events = sqliteEventWrites(db);
const webhooks = sqliteWebhookWrites(db);

/** Records changes in the feed, in the order they were made, and queues their webhook messages. */
function announce(list: readonly PlantChange[]): void {
  recorded += list.length;
  queued += webhooks.queue(events.record(list, now), now);
}

function flushChanges(): void {
  if (changes.length === 0) return;
  announce(changes);
  changes = [];
}

const keys = sqliteKeyWrites(db, {
  apply: (op) => applyOne(op) as never,
  now: () => now,
});

const imports = sqliteImports(db, {
  nextVersion: (count) => versions.next(count),
  // The changes made before the import in this batch come first in the feed.
  announce: (list) => {
    flushChanges();
    announce(list);
  },
});

/** How each kind of write is applied, inside the batch's transaction. */
const apply: { [K in WriteKind]: (op: WriteOf<K>) => WriteResults[K] } = {
  ...sqlitePlantWrites(db, versions, (change) => changes.push(change)),
  ...sqliteTokenWrites(db),
  ...webhooks.ops,
  ...events.ops,
  ...imports.ops,
  // An import indexes its plants in bulk, in its own transaction, so that no search after it reads
  // thousands of plants besides the index while the index catches up.
  importCommit: (op) => {
    const result = imports.ops.importCommit(op);
    flushChanges();
    while (search.step(IMPORT_INDEX_CHUNK) > 0);
    return result;
  },
  // Events are deleted only once the index has read them (it learns from them which plants to index).
  deleteExpiredEvents: (op) => {
    while (search.step() > 0);
    return events.ops.deleteExpiredEvents(op);
  },
  indexSearch: () => {
    scheduleIndexing(0);
    return search.behind();
  },
  rebuildSearch: () => search.rebuild(),
  // One row rewritten as it is: the commit appends a page to the write-ahead log, as any write's does.
  probe: () => {
    prepare(db, "UPDATE counters SET value = value WHERE name = 'plant_version'").run();
    return null;
  },
  ...keys.ops,
};

function applyOne(op: WriteOp): WriteResults[WriteKind] {
  return (apply[op.kind] as (op: WriteOp) => WriteResults[WriteKind])(op);
}

// One statement failing aborts the whole batch: a batch is committed whole or not at all, its events,
// its webhook messages and its version counter with it.
const commitBatch = db.transaction((ops: WriteOp[]) => {
  now = Date.now();
  changes = [];
  queued = 0;
  recorded = 0;
  const results = ops.map(applyOne);
  flushChanges();
  versions.save();
  keys.save();
  return { results, queued, recorded };
});

// Catches up at start with what the last run (or a crash) left unindexed, then with other processes' writes.
scheduleIndexing(0);
const checkTimer = setInterval(() => scheduleIndexing(0), INDEX_CHECK_MS).unref();

/**
 * The last batch failed as unavailable (a full disk, say). A batch that writes no row (a webhook claim with
 * nothing due) commits all the same, without a page to write, so the next commit tells the main thread that
 * the store takes writes again (sqlite/health.ts) only if it changed rows: counted only meanwhile.
 */
let batchFailed = false;
const totalChanges = () => prepare(db, 'SELECT total_changes()').pluck().get() as number;

/** Until when the next batch may wait for the lock (BatchLockWait; none said: busyTimeoutMs from its start). */
let lockWaitUntil: number | undefined;

port.on('message', (message: WriteOp[] | BatchLockWait | 'close') => {
  if (!Array.isArray(message) && typeof message === 'object') {
    lockWaitUntil = message.lockWaitUntil;
    return;
  }
  if (message === 'close') {
    indexAll();
    closed = true;
    clearInterval(checkTimer);
    clearTimeout(indexTimer);
    db.close();
    port.close();
    return;
  }
  let reply: BatchReply;
  try {
    const before = batchFailed ? totalChanges() : 0;
    // IMMEDIATE: take the write lock at BEGIN (waiting up to busy_timeout), so a batch that reads before
    // it writes cannot fail with SQLITE_BUSY_SNAPSHOT when another process (the CLI) commits meanwhile.
    // The wait is what is left of its oldest write's DB_TIMEOUT_MS: a write queued behind a batch that
    // waited for the lock does not wait its whole DB_TIMEOUT_MS again (thread.ts).
    waitForLock(lockWaitUntil === undefined ? settings.busyTimeoutMs : Math.max(1, Math.ceil(lockWaitUntil - Date.now())));
    lockWaitUntil = undefined;
    reply = { ok: true, ...commitBatch.immediate(message) };
    if (batchFailed) {
      if (totalChanges() > before) batchFailed = false;
      else reply.nothingWritten = true;
    }
    if (reply.recorded > 0) scheduleIndexing(INDEX_DELAY_MS);
  } catch (error) {
    // A failed batch leaves its import stages as they were before it (TEMP tables roll back too).
    versions.forget();
    keys.forget();
    const classified = classifySqliteError(error);
    batchFailed ||= classified.unavailable;
    reply = { ok: false, error: classified };
  }
  port.postMessage(reply);
});
