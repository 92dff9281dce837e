/** Plant columns and a page of plants as JSON, made by PostgreSQL. */

// id as text: int8 parsed by toPlantId, whatever type parsers the process has installed. (ORDER BY must then
// name plants.id: a bare "id" there would be the text column and sort "10" before "5".)
export const PLANT_COLUMNS = 'SELECT id::text AS id, name, tag FROM plants';

/**
 * A plants row as JSON text: `{"id":…,"name":…}`, with `"tag":…` when it has one. to_json's escaping of
 * text is JSON.stringify's, byte for byte (the store contract tests check every UTF-16 code unit), and
 * ids are written as exact integers.
 */
const PLANT_JSON = `'{"id":' || id || ',"name":' || to_json(name)::text || CASE WHEN tag IS NULL THEN '}' ELSE ',"tag":' || to_json(tag)::text || '}' END`;

/** One page as one row: the page's JSON, how many plants, the last id, whether more follow. $1 is the limit; `where` uses $2 on. */
export function pageSql(where: string, tagged: boolean): string {
  return `WITH page AS (SELECT id, name, tag FROM plants ${where} ORDER BY id LIMIT $1)
    SELECT COALESCE('[' || string_agg(${PLANT_JSON}, ',' ORDER BY id) || ']', '[]') AS json, count(*)::int AS count, max(id)::text AS last,
           EXISTS (SELECT 1 FROM plants WHERE ${tagged ? 'tag = $2 AND ' : ''}id > (SELECT max(id) FROM page)) AS more
    FROM page`;
}
