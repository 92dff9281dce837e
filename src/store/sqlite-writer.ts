import { parentPort, workerData } from 'node:worker_threads';
import type { PlantChange } from '../webhooks/events.js';
import { openConnection, prepare } from './sqlite-connection.js';
import { classifySqliteError, configureConnection, toPlant, type PlantRow } from './sqlite-rows.js';
import { sqliteWebhookWrites } from './sqlite-webhook-writes.js';
import type { BatchReply, WriteKind, WriteOf, WriteOp, WriteResults, WriterSettings } from './sqlite-writes.js';

/**
 * The SQLite writer thread (started by write-thread.ts): its own connection, one transaction per batch
 * of writes, committed (and, with synchronous=FULL, fsynced) here so that the main thread keeps serving
 * while the disk flushes.
 */

const settings = workerData as WriterSettings;
const port = parentPort!;
const db = openConnection(settings.path);
configureConnection(db, settings);

const getPlant = prepare<[bigint | number], PlantRow>(db, 'SELECT id, name, tag FROM plants WHERE id = ?').safeIntegers(true);
const insertPlant = prepare<[bigint | number, string, string | null]>(db, 'INSERT OR IGNORE INTO plants (id, name, tag) VALUES (?, ?, ?)');
const updatePlant = prepare<[string, string | null, bigint | number]>(db, 'UPDATE plants SET name = ?, tag = ? WHERE id = ?');
const deletePlant = prepare<[bigint | number]>(db, 'DELETE FROM plants WHERE id = ?');
const activeTokenNamed = prepare<[string]>(db, 'SELECT 1 FROM tokens WHERE name = ? AND revoked_at IS NULL');
const insertToken = prepare<[string, string, Buffer, string, string]>(
  db,
  'INSERT INTO tokens (id, name, hash, scopes, created_at) VALUES (?, ?, ?, ?, ?)',
);
const revokeToken = prepare<[string, string, string]>(db, 'UPDATE tokens SET revoked_at = ? WHERE (id = ? OR name = ?) AND revoked_at IS NULL');

const webhooks = sqliteWebhookWrites(db);

/** The plant changes of the batch being applied: the outbox announces them before the batch commits. */
let changes: PlantChange[] = [];

function plantOf(id: bigint | number, name: string, tag: string | null): { id: bigint | number; name: string; tag?: string } {
  return tag === null ? { id, name } : { id, name, tag };
}

/** How each kind of write is applied, inside the batch's transaction. */
const apply: { [K in WriteKind]: (op: WriteOf<K>) => WriteResults[K] } = {
  put({ id, name, tag, createOnly }) {
    if (insertPlant.run(id, name, tag).changes === 1) {
      changes.push({ type: 'plant.created', plant: plantOf(id, name, tag) });
      return 'created';
    }
    if (createOnly) return 'exists';
    updatePlant.run(name, tag, id);
    changes.push({ type: 'plant.updated', plant: plantOf(id, name, tag) });
    return 'replaced';
  },
  patch({ id, name, tag }) {
    const row = getPlant.get(id);
    if (!row) return undefined;
    const current = toPlant(row);
    const newName = name ?? current.name;
    const newTag = tag === undefined ? (current.tag ?? null) : tag;
    updatePlant.run(newName, newTag, id);
    const plant = newTag === null ? { id: current.id, name: newName } : { id: current.id, name: newName, tag: newTag };
    changes.push({ type: 'plant.updated', plant });
    return plant;
  },
  delete({ id }) {
    if (deletePlant.run(id).changes !== 1) return false;
    changes.push({ type: 'plant.deleted', plant: { id } });
    return true;
  },
  createToken({ id, name, hash, scopes, createdAt }) {
    if (activeTokenNamed.get(name)) return 'duplicate-name';
    // A Buffer arrives as a plain Uint8Array after the thread hop.
    insertToken.run(id, name, Buffer.from(hash), scopes, createdAt);
    return 'created';
  },
  revokeToken({ idOrName, at }) {
    return revokeToken.run(at, idOrName, idOrName).changes > 0;
  },
  ...webhooks.ops,
};

function applyOne(op: WriteOp): WriteResults[WriteKind] {
  return (apply[op.kind] as (op: WriteOp) => WriteResults[WriteKind])(op);
}

// One statement failing aborts the whole batch: a batch is committed whole or not at all, its webhook
// messages with it.
const commitBatch = db.transaction((ops: WriteOp[]) => {
  changes = [];
  const results = ops.map(applyOne);
  const queued = changes.length > 0 ? webhooks.queue(changes, Date.now()) : 0;
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
    reply = { ok: false, error: classifySqliteError(error) };
  }
  port.postMessage(reply);
});
