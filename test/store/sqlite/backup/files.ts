import { createHash } from 'node:crypto';
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StoredPlant } from '../../../../src/model/plant.js';
import { openConnection, prepare } from '../../../../src/store/sqlite/connection.js';
import { SqliteStore } from '../../../../src/store/sqlite/store.js';

/** Stores, files and their contents for the backup and restore tests. */

/** A closed plant store at `path` holding `plants`. */
export async function storeWith(path: string, plants: StoredPlant[]): Promise<string> {
  const store = SqliteStore.open(`file:${path}`, { synchronous: 'NORMAL', busyTimeoutMs: 5000 });
  try {
    if (plants.length > 0) {
      const load = await store.plants.startImport();
      await load.add(plants);
      await load.commit({ createOnly: false });
    }
  } finally {
    await store.close();
  }
  return path;
}

/** `count` plants named after their ids. */
export function numbered(count: number, name = (id: number) => `plant ${id}`): StoredPlant[] {
  return Array.from({ length: count }, (_, i) => ({ id: BigInt(i + 1), name: name(i + 1) }));
}

/** Every plant of the SQLite file at `path`, id (as text) to name, read straight from the file. */
export function plantsIn(path: string): Map<string, string> {
  const db = openConnection(path, { readonly: true, fileMustExist: true });
  try {
    const rows = prepare<[], { id: bigint; name: string }>(db, 'SELECT id, name FROM plants ORDER BY id').safeIntegers(true).all();
    return new Map(rows.map((row) => [String(row.id), row.name]));
  } finally {
    db.close();
  }
}

/** SQLite's verdict on the file at `path`. */
export function integrity(path: string): string {
  const db = openConnection(path, { readonly: true, fileMustExist: true });
  try {
    return (prepare(db, 'PRAGMA integrity_check').pluck().all() as string[]).join('; ');
  } finally {
    db.close();
  }
}

/** Each file of `dir` by name with a hash of its bytes: what "nothing changed" compares. */
export function dirState(dir: string): Record<string, string> {
  const state: Record<string, string> = {};
  for (const name of readdirSync(dir).sort())
    state[name] = createHash('sha256')
      .update(readFileSync(join(dir, name)))
      .digest('hex');
  return state;
}

/** The trigger a security review slipped into a backup: it takes back every later revocation of a token. */
const KEEP_TOKENS =
  'CREATE TRIGGER keep_tokens AFTER UPDATE OF revoked_at ON tokens BEGIN UPDATE tokens SET revoked_at = NULL WHERE id = new.id; END';

/**
 * A copy at `target` of the plant store `source` with the review's trigger under a name SQLite keeps for
 * its own objects: made as `keep_tokens`, then renamed in the file's bytes to `sqlite_keep` (as long, so the
 * file stays valid), which SQLite would refuse to create and tools showing a schema pass over.
 */
export function withHiddenTrigger(source: string, target: string): string {
  copyFileSync(source, target);
  const db = openConnection(target, { fileMustExist: true });
  db.exec('PRAGMA journal_mode = DELETE');
  db.exec(KEEP_TOKENS);
  db.close();
  const bytes = readFileSync(target);
  const from = Buffer.from('keep_tokens');
  let renamed = 0;
  for (let at = bytes.indexOf(from); at !== -1; at = bytes.indexOf(from, at + from.length), renamed++) bytes.write('sqlite_keep', at, 'latin1');
  // In sqlite_master's row: its name, and the name in its SQL.
  if (renamed < 2) throw new Error(`renamed ${renamed} copies of keep_tokens`);
  writeFileSync(target, bytes);
  return target;
}
