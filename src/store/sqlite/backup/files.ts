import { closeSync, fsyncSync, openSync, readdirSync, rmSync } from 'node:fs';
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

/** Whether a process runs (one of another user's answers EPERM: it runs). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the partial files beside `path` (partialName's, and their journals) of processes that have gone
 * without removing them: killed outright (SIGKILL, the OOM killer) or stopped by a crash or a power cut,
 * each left a hidden file as big as the store, which nothing else would ever delete. A process that runs
 * under that pid (its own, or another's since) keeps its file.
 */
export function removeAbandonedPartials(path: string): void {
  const ours = new RegExp(`^\\.${basename(path).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.partial-(\\d+)-[0-9a-f]+(?:-journal)?$`);
  for (const name of readdirSync(dirname(path))) {
    const pid = ours.exec(name)?.[1];
    if (pid !== undefined && !running(Number(pid))) rmSync(join(dirname(path), name), { force: true });
  }
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
