import { parentPort, workerData } from 'node:worker_threads';
import type { PlantChange } from '../../../model/events.js';
import { configureConnection, openConnection } from '../connection.js';
import { classifySqliteError } from '../errors.js';
import { sqliteEventWrites } from './feed.js';
import { sqliteImports } from './imports.js';
import { sqlitePlantWrites, Versions } from './plant-writes.js';
import type { BatchReply, WriteKind, WriteOf, WriteOp, WriteResults, WriterSettings } from './protocol.js';
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
  return { results, queued, recorded };
});

port.on('message', (message: WriteOp[] | 'close') => {
  if (message === 'close') {
    db.close();
    port.close();
    return;
  }
  let reply: BatchReply;
  try {
    // IMMEDIATE: take the write lock at BEGIN (waiting up to busy_timeout), so a batch that reads before
    // it writes cannot fail with SQLITE_BUSY_SNAPSHOT when another process (the CLI) commits meanwhile.
    reply = { ok: true, ...commitBatch.immediate(message) };
  } catch (error) {
    // A failed batch leaves its import stages as they were before it (TEMP tables roll back too).
    versions.forget();
    reply = { ok: false, error: classifySqliteError(error) };
  }
  port.postMessage(reply);
});
