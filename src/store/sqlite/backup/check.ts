import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { prepare, type Connection } from '../connection.js';
import { SQLITE_MIGRATIONS } from '../migrations.js';

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
  return { schemaVersion: newest, plants: prepare(db, 'SELECT count(*) FROM plants').pluck().get() as number };
}
