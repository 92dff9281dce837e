import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
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
