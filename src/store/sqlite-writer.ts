import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { toPlant, type PlantRow } from './sqlite.js';
import type { WriterSettings, WriteOp, WriterReply } from './write-thread.js';

/**
 * The SQLite writer thread (see write-thread.ts): its own connection, one transaction per batch of
 * plant writes, committed (and, with synchronous=FULL, fsynced) here so that the main thread keeps
 * serving while the disk flushes.
 */

const settings = workerData as WriterSettings;
const port = parentPort!;
const db = new Database(settings.path);
db.pragma(`busy_timeout = ${settings.busyTimeoutMs}`);
db.pragma(`synchronous = ${settings.synchronous}`);

const getStmt = db.prepare<[bigint | number], PlantRow>('SELECT id, name, tag FROM plants WHERE id = ?').safeIntegers(true);
const insertStmt = db.prepare<[bigint | number, string, string | null]>('INSERT OR IGNORE INTO plants (id, name, tag) VALUES (?, ?, ?)');
const updateStmt = db.prepare<[string, string | null, bigint | number]>('UPDATE plants SET name = ?, tag = ? WHERE id = ?');
const deleteStmt = db.prepare<[bigint | number]>('DELETE FROM plants WHERE id = ?');

function apply(op: WriteOp): unknown {
  switch (op[0]) {
    case 'put': {
      const [, id, name, tag, createOnly] = op;
      if (insertStmt.run(id, name, tag).changes === 1) return 'created';
      if (createOnly) return 'exists';
      updateStmt.run(name, tag, id);
      return 'replaced';
    }
    case 'patch': {
      const [, id, name, tag] = op;
      const row = getStmt.get(id);
      if (!row) return undefined;
      const current = toPlant(row);
      const newName = name ?? current.name;
      const newTag = tag === undefined ? (current.tag ?? null) : tag;
      updateStmt.run(newName, newTag, id);
      return newTag === null ? { id: current.id, name: newName } : { id: current.id, name: newName, tag: newTag };
    }
    case 'delete':
      return deleteStmt.run(op[1]).changes === 1;
  }
}

// One statement failing aborts the whole batch: a batch is committed whole or not at all.
const commitBatch = db.transaction((ops: WriteOp[]) => ops.map(apply));

port.on('message', (message: WriteOp[] | 'close') => {
  if (message === 'close') {
    db.close();
    port.close();
    return;
  }
  let reply: WriterReply;
  try {
    // IMMEDIATE: take the write lock at BEGIN (waiting up to busy_timeout), so a batch that reads before
    // it writes cannot fail with SQLITE_BUSY_SNAPSHOT when another process (the CLI) commits meanwhile.
    reply = { results: commitBatch.immediate(message) };
  } catch (error) {
    const e = error as { message?: string; code?: unknown };
    reply = { error: { message: String(e.message ?? error), code: typeof e.code === 'string' ? e.code : undefined } };
  }
  port.postMessage(reply);
});
