import { statSync } from 'node:fs';
import { configureConnection, openConnection, type Connection, type SqliteConnectionSettings } from './connection.js';

/** Tries at most this many times: a restore swaps a file once, so a second open always finds it settled. */
const ATTEMPTS = 3;

/** The file at `path` as device and inode, or undefined when there is none. */
function identity(path: string): string | undefined {
  const stat = statSync(path, { throwIfNoEntry: false });
  return stat && `${stat.dev}:${stat.ino}`;
}

/**
 * Opens the store's file in WAL mode, sure to hold the file that is at `path`. `plant-store restore`
 * renames a new file into place while it holds SQLite's exclusive lock on the old one
 * (backup/restore.ts); a connection that opened the old file just before waits for that lock
 * (busy_timeout) and would then read the old file, which has moved aside (SQLite refuses to write to it:
 * SQLITE_READONLY_DBMOVED). Its first read takes the shared lock a restore needs to be without; if that
 * fails so, or the file at `path` is not the one there before the open, the connection is closed and the
 * store opened again.
 */
export function openStoreFile(path: string, settings: SqliteConnectionSettings): Connection {
  for (let attempt = 1; ; attempt++) {
    const before = identity(path);
    const db = openConnection(path);
    try {
      configureConnection(db, settings);
      db.exec('PRAGMA journal_mode = WAL');
    } catch (error) {
      db.close();
      // SQLite refuses to write to a file renamed since it was opened (entering WAL mode writes): the same case.
      if ((error as { code?: unknown }).code === 'SQLITE_READONLY_DBMOVED' && attempt < ATTEMPTS) continue;
      throw error;
    }
    if (identity(path) === before || attempt === ATTEMPTS) return db;
    db.close();
  }
}
