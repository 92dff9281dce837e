import { chownSync, constants, copyFileSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { openConnection, prepare, type Connection } from '../connection.js';
import { realPath } from './backup.js';
import { checkStore, notSqlite, type StoreFacts } from './check.js';
import { fileStamp, fsyncPath, partialName, removeAbandonedPartials, removeDatabaseFile } from './files.js';
import { makePrivate, makePrivateDir } from '../private-files.js';

/**
 * `plant-store restore FILE`: the store at DATABASE_URL replaced by a backup, or left exactly as it was.
 *
 * 1. The file is checked before anything is touched: SQLite's header, no live write-ahead log beside it,
 *    then a copy of it (beside the store, so the final rename is atomic) must pass `PRAGMA
 *    integrity_check` and the plant store's schema check (check.ts).
 * 2. The store must be free. Every connection to a WAL database holds a shared lock on the file for as
 *    long as it is open (a running server always has one open), and leaving WAL mode needs an exclusive
 *    lock: `PRAGMA journal_mode = DELETE` with no wait fails with SQLITE_BUSY while any other process has
 *    the store open. When it succeeds, SQLite has first written the -wal's committed pages into the file
 *    and deleted the -wal and -shm, so the file alone holds the whole store. `BEGIN EXCLUSIVE` then holds
 *    the lock through the swap: a process opening the store meanwhile waits (its busy_timeout).
 * 3. The old file is renamed aside (`<store>.replaced-<UTC time>`, a complete database), the checked copy
 *    renamed into its place, the directory fsynced, and only then the lock released. A process that
 *    opened the old file while it waited notices the swap and opens the new one (sqlite/open-file.ts).
 */

export interface RestoreResult extends StoreFacts {
  /** Where the replaced store was kept (undefined when there was none). */
  keptAt: string | undefined;
}

/** SQLite's result code of an error from better-sqlite3, if it has one. */
const codeOf = (error: unknown): string => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
};
const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** What is wrong with a file that would not open as a plant store, in words that follow "it". */
function unusable(error: unknown): string {
  const code = codeOf(error);
  if (code === 'SQLITE_NOTADB') return 'is not an SQLite database';
  if (code.startsWith('SQLITE_CORRUPT')) return `is corrupt (${messageOf(error)})`;
  return code.startsWith('SQLITE_') ? `cannot be read (${code}: ${messageOf(error)})` : messageOf(error);
}

/** Opens the staged copy as the server will, in rollback mode whatever it was made in, and checks it. */
function checkStaged(staged: string): StoreFacts {
  const db = openConnection(staged, { fileMustExist: true });
  try {
    db.exec('PRAGMA journal_mode = DELETE');
    return checkStore(db);
  } finally {
    db.close();
  }
}

/**
 * Run by root (an operator's sudo), the restored store takes the owner and group of the file it replaces,
 * or of its folder when there is none: the service runs as a user of its own (docs/production.md), and a
 * private file of root's in its place would stop it at its next start. Any other user cannot give a file away:
 * the store is that user's, as every file it makes.
 */
function keepOwner(staged: string, store: string): void {
  if (process.getuid?.() !== 0) return;
  const { uid, gid } = statSync(store, { throwIfNoEntry: false }) ?? statSync(dirname(store));
  chownSync(staged, uid, gid);
}

export function restoreSqlite(source: string, databasePath: string): RestoreResult {
  const from = resolve(source);
  const store = resolve(databasePath);
  const refuse = (why: string) => new Error(`cannot restore from ${from}: ${why}; nothing was replaced`);
  if (realPath(from) === realPath(store)) throw refuse('it is the store itself');
  const stat = statSync(from, { throwIfNoEntry: false });
  if (!stat) throw refuse('there is no such file');
  if (!stat.isFile()) throw refuse('it is not a file');
  const bytes = notSqlite(from);
  if (bytes) throw refuse(`it ${bytes}`);
  if ((statSync(`${from}-wal`, { throwIfNoEntry: false })?.size ?? 0) > 0) {
    throw refuse(`it has a write-ahead log beside it (${from}-wal), so it is a live database, not a backup: back it up with plant-store backup`);
  }
  makePrivateDir(dirname(store));
  // A restore killed before it was done left its staged copy beside the store: gone now.
  removeAbandonedPartials(store);
  const staged = partialName(store);
  try {
    copyFileSync(from, staged, constants.COPYFILE_EXCL);
    // The copy took the backup's mode: the store is private whatever the backup's was.
    makePrivate(staged);
    keepOwner(staged, store);
    let facts: StoreFacts;
    try {
      facts = checkStaged(staged);
    } catch (error) {
      throw refuse(`it ${unusable(error)}`);
    }
    fsyncPath(staged);
    return { ...facts, keptAt: swap(staged, store) };
  } finally {
    // Gone already when the swap renamed it into place.
    removeDatabaseFile(staged);
  }
}

/**
 * Takes the store for this process alone (see above), or undefined for a file SQLite cannot read at all:
 * no process can be using that one, and it is kept aside like any other.
 */
function lockStore(store: string): Connection | undefined {
  // Opening creates an empty file when there is none: locked like any other, so no server can start on it unseen.
  const db = openConnection(store);
  try {
    db.exec('PRAGMA busy_timeout = 0');
    const mode = prepare(db, 'PRAGMA journal_mode = DELETE').pluck().get();
    if (mode !== 'delete') throw Object.assign(new Error(`the journal mode stayed ${String(mode)}`), { code: 'SQLITE_BUSY' });
    db.exec('BEGIN EXCLUSIVE');
    return db;
  } catch (error) {
    db.close();
    const code = codeOf(error);
    if (code === 'SQLITE_NOTADB') return undefined;
    if (/^SQLITE_(BUSY|LOCKED)/.test(code)) {
      throw new Error(
        `the store ${store} is open in another process (a running server, or a plant-store command): stop it, then restore; nothing was replaced`,
      );
    }
    throw new Error(`cannot take the store ${store} for the restore (${code || 'error'}: ${messageOf(error)}); nothing was replaced`);
  }
}

/** A name beside the store, for the file it replaces, that no file has yet. */
/** The plant versions a store has given out (its counter), or undefined for a file that keeps none (empty, or not a store). */
function versionsIssued(db: Connection): number | undefined {
  try {
    return prepare<[], number>(db, "SELECT value FROM counters WHERE name = 'plant_version'").pluck().get();
  } catch {
    return undefined;
  }
}

/**
 * The restored store goes on counting versions from the last one the replaced store gave out, not from the
 * backup's: versions are never reused (docs/api.md), and the writes after the backup had taken the versions
 * the backup's counter would give again. A client holding an ETag read then would have it match another state
 * of the plant (If-Match letting a stale write through, If-None-Match a wrong 304).
 */
function keepVersionsAhead(lock: Connection | undefined, staged: string): void {
  const replaced = lock && versionsIssued(lock);
  if (replaced === undefined) return;
  const db = openConnection(staged, { fileMustExist: true });
  try {
    // A backup of a schema before versions (no counter) gets its counter from its migration, as it would have.
    if (versionsIssued(db) === undefined) return;
    prepare<[number]>(db, "UPDATE counters SET value = max(value, ?) WHERE name = 'plant_version'").run(replaced);
  } finally {
    db.close();
  }
  fsyncPath(staged);
}

function asideName(store: string): string {
  const base = `${store}.replaced-${fileStamp(new Date())}`;
  let name = base;
  for (let n = 2; existsSync(name); n++) name = `${base}-${n}`;
  return name;
}

/** Renames `staged` into the store's place under the store's lock; returns where the old store was kept. */
function swap(staged: string, store: string): string | undefined {
  const lock = lockStore(store);
  let keptAt: string | undefined;
  try {
    for (const suffix of ['-wal', '-shm']) {
      // Under the exclusive lock no connection can be using them; a -wal with pages here would be a bug to stop at.
      const size = statSync(`${store}${suffix}`, { throwIfNoEntry: false })?.size;
      if (suffix === '-wal' && size !== undefined && size > 0) throw new Error(`${store}-wal still holds pages; nothing was replaced`);
      rmSync(`${store}${suffix}`, { force: true });
    }
    keepVersionsAhead(lock, staged);
    // An empty file is no store (the one lockStore made, say): replaced, not kept.
    if (statSync(store).size > 0) {
      keptAt = asideName(store);
      renameSync(store, keptAt);
    }
    try {
      renameSync(staged, store);
    } catch (error) {
      if (keptAt) renameSync(keptAt, store);
      throw error;
    }
    fsyncPath(dirname(store));
    return keptAt;
  } finally {
    if (lock?.inTransaction) lock.exec('COMMIT');
    lock?.close();
  }
}
