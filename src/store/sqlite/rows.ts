/** A plant as JSON, made by SQLite. */

/**
 * A plants row (`plants p`) as JSON text: `{"id":…,"name":…}`, with `"tag":…` when it has one. SQLite's
 * JSON escaping is JSON.stringify's, byte for byte (the store contract tests check every UTF-16 code
 * unit), and ids are written as exact integers.
 */
export const PLANT_JSON = `CASE WHEN p.tag IS NULL THEN json_object('id', p.id, 'name', p.name) ELSE json_object('id', p.id, 'name', p.name, 'tag', p.tag) END`;
