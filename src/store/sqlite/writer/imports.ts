import { prepare, type Connection } from '../connection.js';
import type { PlantChange } from '../../../model/events.js';
import { toPlant, type PlantRow } from '../../rows.js';
import type { WriteOf, WriteResults } from './protocol.js';

/**
 * Bulk imports in the SQLite writer thread. Rows are staged in a TEMP table of the writer's connection
 * (no fsync, invisible to readers, gone with the connection), chunk by chunk as they arrive, each chunk
 * in the group-commit batch it travels with; the commit moves them into `plants` in one batch, so an
 * import is stored whole or not at all. Duplicate ids: the staging table keeps the last row of each.
 */

/**
 * Staged rows are read back this many at a time to announce them, so memory stays flat: a chunk's rows,
 * bodies and events die young in the writer thread's small young generation (4 MB). At 10,000 a time they
 * were promoted to the old one, which grew; at 1,000 still a fifth of what announcing allocated was (75
 * full collections in a 200 MB import, the old generation at 26 MB before each); at 250, 5, and the
 * import's commit took a tenth less CPU.
 */
const ANNOUNCE_CHUNK = 250;

interface Needs {
  nextVersion(count?: number): number;
  /** Records changes in the change feed and queues their webhook messages, in this batch. */
  announce(changes: PlantChange[]): void;
}

type Ops = { [K in 'importStage' | 'importCommit' | 'importAbort']: (op: WriteOf<K>) => WriteResults[K] };

export function sqliteImports(db: Connection, needs: Needs): { ops: Ops } {
  // Imports in progress stage into numbered tables, a number reused once its import ends: the statements
  // naming them are prepared once and kept (sqlite/connection.ts), so their number must stay small.
  const slots = new Map<number, number>();
  const slot = (importId: number): number => {
    let n = slots.get(importId);
    if (n === undefined) {
      const used = new Set(slots.values());
      for (n = 1; used.has(n); n++);
      slots.set(importId, n);
    }
    return n;
  };
  const table = (importId: number) => `temp.import_${slot(importId)}`;
  const create = (importId: number) =>
    db.exec(`CREATE TEMP TABLE IF NOT EXISTS import_${slot(importId)} (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tag TEXT)`);
  const drop = (importId: number) => {
    db.exec(`DROP TABLE IF EXISTS ${table(importId)}`);
    slots.delete(importId);
  };

  /**
   * Announces every staged plant, created or updated, reading the staging table a chunk at a time. Into an
   * empty store (`fresh`) every plant is created, so no row looks for a stored one.
   */
  function announce(importId: number, fresh: boolean): void {
    const existed = fresh ? '0' : 'EXISTS (SELECT 1 FROM plants p WHERE p.id = s.id)';
    const first = prepare<[number], PlantRow<bigint> & { existed: bigint }>(
      db,
      `SELECT s.id, s.name, s.tag, ${existed} AS existed FROM ${table(importId)} s ORDER BY s.id LIMIT ?`,
    ).safeIntegers(true);
    const next = prepare<[bigint, number], PlantRow<bigint> & { existed: bigint }>(
      db,
      `SELECT s.id, s.name, s.tag, ${existed} AS existed FROM ${table(importId)} s WHERE s.id > ? ORDER BY s.id LIMIT ?`,
    ).safeIntegers(true);
    for (let rows = first.all(ANNOUNCE_CHUNK); rows.length > 0; rows = next.all(rows.at(-1)!.id, ANNOUNCE_CHUNK)) {
      needs.announce(rows.map((row) => ({ type: row.existed ? 'plant.updated' : 'plant.created', plant: toPlant(row) })));
    }
  }

  return {
    ops: {
      importStage({ importId, rows }) {
        create(importId);
        const insert = prepare<[bigint, string, string | null]>(db, `INSERT OR REPLACE INTO ${table(importId)} (id, name, tag) VALUES (?, ?, ?)`);
        const values = rows.text.split('\u0000');
        for (let i = 0, v = 0; i < rows.ids.length; i++) {
          const name = values[v++]!;
          insert.run(rows.ids[i]!, name, rows.tagged[i] === 1 ? values[v++]! : null);
        }
        return null;
      },
      importCommit({ importId, createOnly }) {
        create(importId);
        const staged = table(importId);
        // Exact: this thread is the only writer, and the batch's transaction is open. An empty store has
        // nothing to conflict with or replace, so the merge is a plain insert in id order (the order of
        // the primary key's b-tree, appended page by page) and no row looks for a stored one.
        const fresh = prepare<[], number>(db, 'SELECT NOT EXISTS (SELECT 1 FROM plants)').pluck().get() === 1;
        if (createOnly && !fresh) {
          // The smallest such id, as PostgreSQL names it (LIMIT 1 alone named whichever the join met first).
          const existing = prepare<[], bigint>(db, `SELECT s.id FROM ${staged} s JOIN plants p ON p.id = s.id ORDER BY s.id LIMIT 1`)
            .pluck()
            .safeIntegers(true)
            .get();
          if (existing !== undefined) {
            drop(importId);
            return { conflict: String(existing) };
          }
        }
        const total = prepare<[], number>(db, `SELECT count(*) FROM ${staged}`).pluck().get()!;
        const replaced = fresh
          ? 0
          : prepare<[], number>(db, `SELECT count(*) FROM ${staged} s WHERE EXISTS (SELECT 1 FROM plants p WHERE p.id = s.id)`).pluck().get()!;
        if (total > 0) {
          announce(importId, fresh);
          // One version for the whole import: each plant's version still changes, and is never reused.
          const merge = fresh
            ? `INSERT INTO plants (id, name, tag, version, name_fold) SELECT id, name, tag, ?, plant_fold(name) FROM ${staged} ORDER BY id`
            : `INSERT INTO plants (id, name, tag, version, name_fold) SELECT id, name, tag, ?, plant_fold(name) FROM ${staged} WHERE true
             ON CONFLICT (id) DO UPDATE SET name = excluded.name, tag = excluded.tag, version = excluded.version, name_fold = excluded.name_fold`;
          prepare<[number]>(db, merge).run(needs.nextVersion());
        }
        drop(importId);
        return { created: total - replaced, replaced };
      },
      importAbort({ importId }) {
        drop(importId);
        return null;
      },
    },
  };
}
