import { toPlantId } from '../../plants/id.js';
import type { Plant } from '../store.js';

/** Plant rows as both threads read them, and a page of them as JSON made by SQLite. */

/** A plant row as read with safeIntegers: ids as bigint, exact. */
export interface PlantRow {
  id: bigint;
  name: string;
  tag: string | null;
}

export function toPlant(row: PlantRow): Plant {
  const id = toPlantId(row.id);
  return row.tag === null ? { id, name: row.name } : { id, name: row.name, tag: row.tag };
}

/**
 * A plants row as JSON text: `{"id":…,"name":…}`, with `"tag":…` when it has one. SQLite's JSON escaping
 * is JSON.stringify's, byte for byte (the store contract tests check every UTF-16 code unit), and ids are
 * written as exact integers.
 */
export const PLANT_JSON = `CASE WHEN tag IS NULL THEN json_object('id', id, 'name', name) ELSE json_object('id', id, 'name', name, 'tag', tag) END`;

/** One page as [json, count, last id, more] (read raw, with safeIntegers): `where` picks the rows, `@tag` and `@after` its parameters. */
export function pageSql(where: string, tagged: boolean): string {
  return `WITH page AS (SELECT id, name, tag FROM plants ${where} ORDER BY id LIMIT @limit)
    SELECT json_group_array(${PLANT_JSON} ORDER BY id), count(*), max(id),
           EXISTS (SELECT 1 FROM plants WHERE ${tagged ? 'tag = @tag AND ' : ''}id > (SELECT max(id) FROM page))
    FROM page`;
}

/** A page's row as pageSql reads it. */
export type PageRow = [json: string, count: bigint, last: bigint | null, more: bigint];
