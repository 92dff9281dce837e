import { statSync } from 'node:fs';
import { pauseThread } from '../../pause.js';
import { configureConnection, openConnection, type Connection, type SqliteConnectionSettings } from './connection.js';

/** Tries at most this many times: a restore swaps a file once, so a second open always finds it settled. */
const ATTEMPTS = 3;
/** How long apart the WAL switch is tried again while another connection holds the lock it needs. */
const WAL_RETRY_MS = 5;

/** The file at `path` as device and inode, or undefined when there is none. */
export function identity(path: string): string | undefined {
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
      enterWal(db, settings.busyTimeoutMs);
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

/**
 * `PRAGMA journal_mode = WAL`, waiting as busy_timeout would. Switching a new file to WAL takes an exclusive
 * lock, and SQLite answers SQLITE_BUSY at once, without its busy handler, while another connection holds a
 * lock: two processes opening a new store together (the workers of WEB_CONCURRENCY > 1, starting at once)
 * each switch it, and one of them failed to start (1 start in 60 on Node 20, 1 in 6 on Node 24). So it is
 * tried again until `busyTimeoutMs` has passed; on a file in WAL mode already it is a read, and succeeds at once.
 */
function enterWal(db: Connection, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      db.exec('PRAGMA journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw error;
      pauseThread(WAL_RETRY_MS);
    }
  }
}
