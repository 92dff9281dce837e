/** A page of plants as JSON, made by SQLite. */

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
