import { parentPort, workerData } from 'node:worker_threads';
import type { PlantId } from '../plants/id.js';
import type { PlantChange } from '../webhooks/events.js';
import { openConnection, prepare } from './sqlite-connection.js';
import { sqliteImports } from './sqlite-imports.js';
import { classifySqliteError, configureConnection, toPlant, type PlantRow } from './sqlite-rows.js';
import { sqliteWebhookWrites } from './sqlite-webhook-writes.js';
import type { BatchReply, WriteKind, WriteOf, WriteOp, WriteResults, WriterSettings } from './sqlite-writes.js';
import type { IfMatch } from './store.js';

/**
 * The SQLite writer thread (started by write-thread.ts): its own connection, one transaction per batch
 * of writes, committed (and, with synchronous=FULL, fsynced) here so that the main thread keeps serving
 * while the disk flushes.
 */

const settings = workerData as WriterSettings;
const port = parentPort!;
const db = openConnection(settings.path);
configureConnection(db, settings);

const getPlant = prepare<[PlantId], PlantRow & { version: bigint }>(db, 'SELECT id, name, tag, version FROM plants WHERE id = ?').safeIntegers(true);
const getVersion = prepare<[PlantId], bigint>(db, 'SELECT version FROM plants WHERE id = ?').pluck().safeIntegers(true);
const insertPlant = prepare<[PlantId, string, string | null, number]>(
  db,
  'INSERT OR IGNORE INTO plants (id, name, tag, version) VALUES (?, ?, ?, ?)',
);
const updatePlant = prepare<[string, string | null, number, PlantId]>(db, 'UPDATE plants SET name = ?, tag = ?, version = ? WHERE id = ?');
const deletePlant = prepare<[PlantId]>(db, 'DELETE FROM plants WHERE id = ?');
const readCounter = prepare<[], number>(db, "SELECT value FROM counters WHERE name = 'plant_version'").pluck();
const writeCounter = prepare<[number]>(db, "UPDATE counters SET value = ? WHERE name = 'plant_version'");
const activeTokenNamed = prepare<[string]>(db, 'SELECT 1 FROM tokens WHERE name = ? AND revoked_at IS NULL');
const insertToken = prepare<[string, string, Buffer, string, string]>(
  db,
  'INSERT INTO tokens (id, name, hash, scopes, created_at) VALUES (?, ?, ?, ?, ?)',
);
const revokeToken = prepare<[string, string, string]>(db, 'UPDATE tokens SET revoked_at = ? WHERE (id = ? OR name = ?) AND revoked_at IS NULL');

const webhooks = sqliteWebhookWrites(db);

/** The state of the batch being applied: its plant changes (announced before it commits) and versions. */
let changes: PlantChange[] = [];
let queued = 0;
let lastVersion: number | undefined;

/** The next plant version: counted in memory through the batch, from the stored counter, written back before commit. */
function nextVersion(count = 1): number {
  lastVersion = (lastVersion ?? readCounter.get()!) + count;
  return lastVersion;
}

/** The current version of a plant, or undefined when there is none. */
function versionOf(id: PlantId): number | undefined {
  const version = getVersion.get(id);
  return version === undefined ? undefined : Number(version);
}

function holds(ifMatch: IfMatch, version: number | undefined): boolean {
  return version !== undefined && (ifMatch === '*' || ifMatch.includes(version));
}

function plantOf(id: PlantId, name: string, tag: string | null): { id: PlantId; name: string; tag?: string } {
  return tag === null ? { id, name } : { id, name, tag };
}

const imports = sqliteImports(db, { nextVersion, queue: (batch, now) => (queued += webhooks.queue(batch, now)) });

/** How each kind of write is applied, inside the batch's transaction. */
const apply: { [K in WriteKind]: (op: WriteOf<K>) => WriteResults[K] } = {
  put({ id, name, tag, createOnly, ifMatch }) {
    if (ifMatch !== undefined && !holds(ifMatch, versionOf(id))) return { outcome: 'precondition-failed' };
    const version = nextVersion();
    if (ifMatch === undefined && insertPlant.run(id, name, tag, version).changes === 1) {
      changes.push({ type: 'plant.created', plant: plantOf(id, name, tag) });
      return { outcome: 'created', version };
    }
    if (createOnly) return { outcome: 'exists' };
    updatePlant.run(name, tag, version, id);
    changes.push({ type: 'plant.updated', plant: plantOf(id, name, tag) });
    return { outcome: 'replaced', version };
  },
  patch({ id, name, tag, ifMatch }) {
    const row = getPlant.get(id);
    if (ifMatch !== undefined && !holds(ifMatch, row && Number(row.version))) return 'precondition-failed';
    if (!row) return 'not-found';
    const current = toPlant(row);
    const newName = name ?? current.name;
    const newTag = tag === undefined ? (current.tag ?? null) : tag;
    const version = nextVersion();
    updatePlant.run(newName, newTag, version, id);
    const plant = plantOf(current.id, newName, newTag);
    changes.push({ type: 'plant.updated', plant });
    return { plant, version };
  },
  delete({ id, ifMatch }) {
    if (ifMatch !== undefined && !holds(ifMatch, versionOf(id))) return 'precondition-failed';
    if (deletePlant.run(id).changes !== 1) return 'not-found';
    changes.push({ type: 'plant.deleted', plant: { id } });
    return 'deleted';
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
  lastVersion = undefined;
  const results = ops.map(applyOne);
  if (changes.length > 0) queued += webhooks.queue(changes, Date.now());
  if (lastVersion !== undefined) writeCounter.run(lastVersion);
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
    lastVersion = undefined;
    reply = { ok: false, error: classifySqliteError(error) };
  }
  port.postMessage(reply);
});
