import { foldCase } from '../../../model/fold.js';
import type { PlantId } from '../../../model/plant-id.js';
import type { PlantChange } from '../../../model/events.js';
import type { IfMatch, IfNoneMatch } from '../../store.js';
import { prepare, type Connection } from '../connection.js';
import { plantOf, toPlant, type PlantRow } from '../../rows.js';
import type { WriteOf, WriteResults } from './protocol.js';

/**
 * Plant versions in the writer thread: one counter for the whole store, counted in memory through a
 * batch from the stored value and written back before the batch commits (a failed batch forgets them).
 */
export class Versions {
  private last: number | undefined;
  private readonly read;
  private readonly write;

  constructor(db: Connection) {
    this.read = prepare<[], number>(db, "SELECT value FROM counters WHERE name = 'plant_version'").pluck();
    this.write = prepare<[number]>(db, "UPDATE counters SET value = ? WHERE name = 'plant_version'");
  }

  /** The next version (or the last of `count` taken at once). */
  next(count = 1): number {
    this.last = (this.last ?? this.read.get()!) + count;
    return this.last;
  }

  /** Writes the counter back, if the batch took versions; then starts afresh for the next batch. */
  save(): void {
    if (this.last !== undefined) this.write.run(this.last);
    this.last = undefined;
  }

  forget(): void {
    this.last = undefined;
  }
}

function holds(ifMatch: IfMatch, version: number | undefined): boolean {
  return version !== undefined && (ifMatch === '*' || ifMatch.includes(version));
}

/** Whether If-Match holds, then If-None-Match (RFC 9110 §13.2.2): each when given. */
function allowed(ifMatch: IfMatch | undefined, ifNoneMatch: IfNoneMatch | undefined, version: () => number | undefined): boolean {
  if (ifMatch === undefined && ifNoneMatch === undefined) return true;
  const current = version();
  if (ifMatch !== undefined && !holds(ifMatch, current)) return false;
  return ifNoneMatch === undefined || current === undefined || !ifNoneMatch.includes(current);
}

type Ops = { [K in 'put' | 'patch' | 'delete']: (op: WriteOf<K>) => WriteResults[K] };

/** The plant writes of the writer thread, applied inside the batch's transaction; each change is told to `changed`. */
export function sqlitePlantWrites(db: Connection, versions: Versions, changed: (change: PlantChange) => void): Ops {
  const getPlant = prepare<[PlantId], PlantRow<bigint> & { version: bigint }>(
    db,
    'SELECT id, name, tag, version FROM plants WHERE id = ?',
  ).safeIntegers(true);
  const getVersion = prepare<[PlantId], bigint>(db, 'SELECT version FROM plants WHERE id = ?').pluck().safeIntegers(true);
  // name_fold: the name as search compares it (model/fold.ts; the migration plant_search).
  const insertPlant = prepare<[PlantId, string, string | null, number, string]>(
    db,
    'INSERT OR IGNORE INTO plants (id, name, tag, version, name_fold) VALUES (?, ?, ?, ?, ?)',
  );
  const updatePlant = prepare<[string, string | null, number, string, PlantId]>(
    db,
    'UPDATE plants SET name = ?, tag = ?, version = ?, name_fold = ? WHERE id = ?',
  );
  const deletePlant = prepare<[PlantId]>(db, 'DELETE FROM plants WHERE id = ?');

  /** The current version of a plant, or undefined when there is none. */
  const versionOf = (id: PlantId): number | undefined => {
    const version = getVersion.get(id);
    return version === undefined ? undefined : Number(version);
  };

  return {
    put({ id, name, tag, createOnly, ifMatch, ifNoneMatch, traceparent }) {
      if (!allowed(ifMatch, ifNoneMatch, () => versionOf(id))) return { outcome: 'precondition-failed' };
      const version = versions.next();
      if (ifMatch === undefined && insertPlant.run(id, name, tag, version, foldCase(name)).changes === 1) {
        changed({ type: 'plant.created', plant: plantOf(id, name, tag), traceparent });
        return { outcome: 'created', version };
      }
      if (createOnly) return { outcome: 'exists' };
      updatePlant.run(name, tag, version, foldCase(name), id);
      changed({ type: 'plant.updated', plant: plantOf(id, name, tag), traceparent });
      return { outcome: 'replaced', version };
    },
    patch({ id, name, tag, ifMatch, ifNoneMatch, traceparent }) {
      const row = getPlant.get(id);
      if (!allowed(ifMatch, ifNoneMatch, () => row && Number(row.version))) return 'precondition-failed';
      if (!row) return 'not-found';
      const current = toPlant(row);
      const newName = name ?? current.name;
      const newTag = tag === undefined ? (current.tag ?? null) : tag;
      const version = versions.next();
      updatePlant.run(newName, newTag, version, foldCase(newName), id);
      const plant = plantOf(current.id, newName, newTag);
      changed({ type: 'plant.updated', plant, traceparent });
      return { plant, version };
    },
    delete({ id, ifMatch, ifNoneMatch, traceparent }) {
      if (!allowed(ifMatch, ifNoneMatch, () => versionOf(id))) return 'precondition-failed';
      if (deletePlant.run(id).changes !== 1) return 'not-found';
      changed({ type: 'plant.deleted', plant: { id }, traceparent });
      return 'deleted';
    },
  };
}
