import { parentPort, workerData } from 'node:worker_threads';
import type { PlantChange } from '../../../webhooks/events.js';
import { configureConnection, openConnection } from '../connection.js';
import { classifySqliteError } from '../errors.js';
import { sqliteImports } from './imports.js';
import { sqlitePlantWrites, Versions } from './plants.js';
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

/** The plant changes of the batch being applied: announced (the outbox) before it commits. */
let changes: PlantChange[] = [];
let queued = 0;

const versions = new Versions(db);
const webhooks = sqliteWebhookWrites(db);
const imports = sqliteImports(db, {
  nextVersion: (count) => versions.next(count),
  queue: (batch, now) => (queued += webhooks.queue(batch, now)),
});

/** How each kind of write is applied, inside the batch's transaction. */
const apply: { [K in WriteKind]: (op: WriteOf<K>) => WriteResults[K] } = {
  ...sqlitePlantWrites(db, versions, (change) => changes.push(change)),
  ...sqliteTokenWrites(db),
  ...webhooks.ops,
  ...imports.ops,
};

function applyOne(op: WriteOp): WriteResults[WriteKind] {
  return (apply[op.kind] as (op: WriteOp) => WriteResults[WriteKind])(op);
}

// One statement failing aborts the whole batch: a batch is committed whole or not at all, its webhook
// messages and its version counter with it.
const commitBatch = db.transaction((ops: WriteOp[]) => {
  changes = [];
  queued = 0;
  const results = ops.map(applyOne);
  if (changes.length > 0) queued += webhooks.queue(changes, Date.now());
  versions.save();
  return { results, queued };
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
