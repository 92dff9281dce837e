import { chmodSync, closeSync, fchmodSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * The store's files and backups hold every plant and the webhook signing secrets in clear: only the
 * service's own user may read them, whatever the umask it was started with. Files are made 0600 and the
 * directories the service creates 0700. SQLite gives the write-ahead log, the shared-memory file and a
 * journal the mode of their database file, so a store file made 0600 keeps them 0600 too.
 */

const PRIVATE_FILE = 0o600;
const PRIVATE_DIR = 0o700;

/** Makes the directories of `dir` that are missing, each 0700 (an existing one is left as it is). */
export function makePrivateDir(dir: string): void {
  const target = resolve(dir);
  const first = mkdirSync(target, { recursive: true, mode: PRIVATE_DIR });
  if (first === undefined) return;
  // The mode given to mkdir is masked by the umask: set it outright on each directory made.
  const above = dirname(resolve(first));
  for (let made = target; made !== above && made !== dirname(made); made = dirname(made)) chmodSync(made, PRIVATE_DIR);
}

/** Creates `path` as an empty file of mode 0600 unless a file is there already (SQLite takes an empty file for a new database). */
export function createPrivateFile(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'wx', PRIVATE_FILE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw error;
  }
  try {
    fchmodSync(fd, PRIVATE_FILE);
  } finally {
    closeSync(fd);
  }
}

/** Makes an existing file 0600 (a copy takes its source's mode). */
export function makePrivate(path: string): void {
  chmodSync(path, PRIVATE_FILE);
}

/** A warning when the store file at `path` can be read or written by others than its owner, else undefined. */
export function exposedStoreWarning(path: string): string | undefined {
  const mode = statSync(path, { throwIfNoEntry: false })?.mode;
  if (mode === undefined || (mode & 0o077) === 0) return undefined;
  const shown = (mode & 0o777).toString(8).padStart(4, '0');
  return (
    `the store file ${path} has mode ${shown}: users other than this service's can read its plants and webhook secrets; ` +
    `run chmod 600 on it and its -wal and -shm files, and chmod 700 on its directory (files the service creates are private)`
  );
}
