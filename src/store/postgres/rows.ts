/** A plant as JSON, made by PostgreSQL. */

/**
 * A plants row as JSON text: `{"id":…,"name":…}`, with `"tag":…` when it has one. to_json's escaping of
 * text is JSON.stringify's, byte for byte (the store contract tests check every UTF-16 code unit), and
 * ids are written as exact integers.
 */
export const PLANT_JSON = `'{"id":' || id || ',"name":' || to_json(name)::text || CASE WHEN tag IS NULL THEN '}' ELSE ',"tag":' || to_json(tag)::text || '}' END`;
