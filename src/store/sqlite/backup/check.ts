import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { openConnection, prepare, type Connection } from '../connection.js';
import { SQLITE_MIGRATIONS } from '../migrations.js';
import { foreignReservedObject, RESERVED_NAME, shownName } from '../reserved-names.js';

/**
 * What makes a file a usable plant store: checked on every backup written and on every file before a
 * restore installs it, so that a backup is always one that restore takes.
 */

/** What a checked store holds. */
export interface StoreFacts {
  /** The newest migration it records (this build knows SQLITE_MIGRATIONS.length). */
  schemaVersion: number;
  plants: number;
}

/** The 16 bytes every SQLite database file starts with. */
const MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
/** The smallest page, so the smallest database file. */
const MIN_PAGE_SIZE = 512;

/**
 * Why the bytes of `path` cannot be an SQLite database (empty, another format, cut short), or undefined
 * when they may be one. SQLite itself would take an empty file for a new, empty database and a truncated
 * one for a smaller database until a page it needs is missing, so the header is read first.
 */
export function notSqlite(path: string): string | undefined {
  const size = statSync(path).size;
  if (size === 0) return 'is empty';
  const header = Buffer.alloc(100);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (!header.subarray(0, MAGIC.length).equals(MAGIC)) return 'is not an SQLite database (it does not start with the SQLite header)';
  const pageSize = header.readUInt16BE(16) === 1 ? 65_536 : header.readUInt16BE(16);
  // A power of two from 512 to 65536.
  if (pageSize < MIN_PAGE_SIZE || (pageSize & (pageSize - 1)) !== 0) return 'is not an SQLite database (its header names no valid page size)';
  if (size < pageSize || size % pageSize !== 0) return `is cut short: ${size} bytes is not a whole number of its ${pageSize}-byte pages`;
  // The page count in the header is valid when the "version valid for" number matches the change counter.
  const pages = header.readUInt32BE(28);
  if (header.readUInt32BE(92) === header.readUInt32BE(24) && pages * pageSize > size) {
    return `is cut short: its header counts ${pages} pages of ${pageSize} bytes, the file holds ${size / pageSize}`;
  }
  return undefined;
}

/** Runs SQLite's integrity check and checks the plant store's schema; throws an Error saying what is wrong. */
export function checkStore(db: Connection): StoreFacts {
  const problems = prepare(db, 'PRAGMA integrity_check(5)').pluck().all() as string[];
  if (problems.length !== 1 || problems[0] !== 'ok') {
    // SQLite's report has line breaks ("*** in database main ***\nTree 4 page 4: …"): one line here.
    throw new Error(`fails SQLite's integrity check: ${problems.map((problem) => problem.replace(/\s*\n\s*/g, ' ')).join('; ')}`);
  }
  // Before anything of the file is read or run: an object under SQLite's prefix is named, whatever else is wrong.
  const foreign = foreignReservedObject(db);
  if (foreign !== undefined) throw new Error(foreign);
  const migrations = prepare(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!migrations) throw new Error('is an SQLite database but not a plant store (it has no schema_migrations table)');
  const applied = prepare(db, 'SELECT version, name FROM schema_migrations ORDER BY version').all() as Array<{ version: number; name: string }>;
  const newest = applied.at(-1)?.version ?? 0;
  if (newest > SQLITE_MIGRATIONS.length) {
    throw new Error(
      `has schema version ${newest}, newer than this plant-store knows (${SQLITE_MIGRATIONS.length}): use the plant-store that wrote it`,
    );
  }
  applied.forEach((row, i) => {
    const ours = SQLITE_MIGRATIONS[i]!;
    if (row.version !== ours.version || row.name !== ours.name) {
      throw new Error(
        `is not a plant store: its schema_migrations has ${row.version} "${row.name}" where this plant-store has ${ours.version} "${ours.name}"`,
      );
    }
  });
  if (newest === 0) throw new Error('is not a plant store: its schema_migrations table is empty');
  checkSchemaObjects(db, newest);
  return { schemaVersion: newest, plants: prepare(db, 'SELECT count(*) FROM plants').pluck().get() as number };
}

/** A table, index, trigger or view as sqlite_master holds it. */
interface SchemaObject {
  type: string;
  name: string;
  sql: string | null;
}

/**
 * Every object but those under SQLite's prefix: no migration makes those, and they are checked as SQLite's
 * own (sqlite_sequence, automatic indexes, statistics) by reserved-names.ts.
 */
const OBJECTS_SQL = `SELECT type, name, sql FROM sqlite_master WHERE NOT ${RESERVED_NAME} ORDER BY type, name`;

/** Every object the migrations up to `version` make, by "type name", from an empty database they run in. */
function expectedObjects(version: number): Map<string, SchemaObject> {
  const db = openConnection(':memory:');
  try {
    for (const migration of SQLITE_MIGRATIONS.slice(0, version)) db.exec(migration.sql);
    db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    return new Map((prepare(db, OBJECTS_SQL).all() as SchemaObject[]).map((object) => [`${object.type} ${object.name}`, object]));
  } finally {
    db.close();
  }
}

/**
 * The file holds exactly the tables, indexes, triggers and views its schema version has, each as the
 * migrations made it: a restored store is trusted as the live one was, and one object more (a trigger that
 * un-revokes every token revoked later, a view shadowing a table) would act inside it. Migrations never
 * change once shipped, so their SQL is the reference, compared with line breaks and runs of spaces as one.
 */
function checkSchemaObjects(db: Connection, version: number): void {
  const expected = expectedObjects(version);
  const found = prepare(db, OBJECTS_SQL).all() as SchemaObject[];
  const text = (sql: string | null) => (sql ?? '').replace(/\s+/g, ' ').trim();
  for (const object of found) {
    const wanted = expected.get(`${object.type} ${object.name}`);
    if (wanted === undefined) {
      throw new Error(
        `is not a plant store as this plant-store makes it: it has ${object.type === 'index' ? 'an' : 'a'} ${shownName(object.type)} ${shownName(object.name)} that schema version ${version} does not have`,
      );
    }
    if (text(wanted.sql) !== text(object.sql)) {
      throw new Error(
        `is not a plant store as this plant-store makes it: its ${shownName(object.type)} ${shownName(object.name)} is not the one schema version ${version} makes`,
      );
    }
    expected.delete(`${object.type} ${object.name}`);
  }
  const [missing] = expected.values();
  if (missing)
    throw new Error(`is not a plant store as this plant-store makes it: it lacks the ${missing.type} ${missing.name} of schema version ${version}`);
}
