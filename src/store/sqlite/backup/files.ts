import { closeSync, fsyncSync, openSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';

/**
 * File steps shared by backup and restore. A file SQLite has open in this process is never opened here:
 * closing any descriptor of a file drops every POSIX lock this process holds on it, SQLite's included.
 */

/** Flushes a file's bytes, or a directory's entries (a rename in it), to the disk. */
export function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * A name beside `path` for a file being written, hidden and unique (`.plants.db.partial-<pid>-<hex>`): in
 * the target's directory, so that the rename into place is atomic, and never taken for a finished file.
 */
export function partialName(path: string): string {
  return join(dirname(path), `.${basename(path)}.partial-${process.pid}-${randomBytes(4).toString('hex')}`);
}

/** Removes a database file that will not be used and the files SQLite may have made beside it. */
export function removeDatabaseFile(path: string): void {
  for (const suffix of ['', '-journal', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
}

/** A UTC time as sortable text for file names: 20250102T030405Z. */
export function fileStamp(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}
