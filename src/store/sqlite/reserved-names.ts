import { prepare, type Connection } from './connection.js';

/**
 * SQLite keeps the names that start with `sqlite_` (in any case) for objects of its own: it refuses to
 * create one, and tools that show a schema pass over them. A file can carry one all the same, written
 * into its bytes or with `PRAGMA writable_schema`, and a trigger or view so named acts as any other: a
 * trigger `sqlite_keep` that sets `revoked_at` back to NULL after every revocation would keep every
 * revoked token working. So an object under the prefix is taken only when it is one SQLite makes:
 *
 * - the table `sqlite_sequence` (AUTOINCREMENT's counters) and the statistics tables `sqlite_stat1` to
 *   `sqlite_stat4` (ANALYZE), each with the definition SQLite gives it;
 * - `sqlite_autoindex_<table>_<n>`, an index without SQL that SQLite makes for a UNIQUE or PRIMARY KEY
 *   constraint, when its table exists and SQLite finds that index among the table's own.
 *
 * Checked by the backup and restore check (backup/check.ts) and each time the store is opened (store.ts).
 */

/** SQLite's own tables, with the SQL it writes for each. */
const OWN_TABLES: ReadonlyMap<string, string> = new Map([
  ['sqlite_sequence', 'CREATE TABLE sqlite_sequence(name,seq)'],
  ['sqlite_stat1', 'CREATE TABLE sqlite_stat1(tbl,idx,stat)'],
  ['sqlite_stat2', 'CREATE TABLE sqlite_stat2(tbl,idx,sampleno,sample)'],
  ['sqlite_stat3', 'CREATE TABLE sqlite_stat3(tbl,idx,neq,nlt,ndlt,sample)'],
  ['sqlite_stat4', 'CREATE TABLE sqlite_stat4(tbl,idx,neq,nlt,ndlt,sample)'],
]);

/** The names under SQLite's prefix, whatever their case (SQLite compares names without it). */
export const RESERVED_NAME = "lower(substr(name, 1, 7)) = 'sqlite_'";

const AUTOINDEX = /^sqlite_autoindex_(.+)_[1-9]\d*$/;

interface SchemaRow {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

/** A name as a message shows it: as it is when plain, else quoted (a crafted name may hold anything, line breaks too). */
export function shownName(name: string): string {
  return /^[\w$]+$/.test(name) ? name : JSON.stringify(name);
}

const article = (type: string) => (/^[aeiou]/.test(type) ? 'an' : 'a');

/** Why `row`, named under the prefix, is not one of SQLite's own objects; undefined when it is. */
function notOwn(db: Connection, row: SchemaRow): string | undefined {
  const own = OWN_TABLES.get(row.name);
  if (own !== undefined) {
    return row.type === 'table' && row.tbl_name === row.name && row.sql === own ? undefined : `SQLite's own ${row.name} is a table made as ${own}`;
  }
  const table = AUTOINDEX.exec(row.name)?.[1];
  if (table === undefined) return `SQLite makes no such ${row.type}`;
  if (row.type !== 'index' || row.sql !== null || row.tbl_name !== table)
    return `SQLite makes a ${row.name} only as an index of ${table} without SQL`;
  const belongs = prepare(db, "SELECT 1 FROM pragma_index_list(?) WHERE name = ? AND origin IN ('u', 'pk')").get(table, row.name);
  return belongs ? undefined : `no table ${shownName(table)} has that index`;
}

/**
 * The first object of the database under SQLite's prefix that SQLite did not make, in words that follow
 * "it" ("has a trigger sqlite_keep, a name SQLite keeps for its own objects (sqlite_…), but SQLite makes
 * no such trigger"), or undefined when there is none.
 */
export function foreignReservedObject(db: Connection): string | undefined {
  const rows = prepare(db, `SELECT type, name, tbl_name, sql FROM sqlite_master WHERE ${RESERVED_NAME} ORDER BY type, name`).all() as SchemaRow[];
  for (const row of rows) {
    const why = notOwn(db, row);
    if (why !== undefined) {
      return `has ${article(row.type)} ${shownName(row.type)} ${shownName(row.name)}, a name SQLite keeps for its own objects (sqlite_…), but ${why}`;
    }
  }
  return undefined;
}
