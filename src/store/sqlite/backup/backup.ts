import { fork } from 'node:child_process';
import { existsSync, realpathSync, statfsSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { StoreFacts } from './check.js';
import { partialName, removeDatabaseFile } from './files.js';
import { builtFile } from '../../../built.js';

/**
 * A consistent copy of a live SQLite store, the one way both `plant-store backup` and the server's
 * schedule take one. `VACUUM INTO` (chosen over the online backup API: see docs/design.md, Backups) reads the store in one WAL read transaction, so writers never wait for it, into a hidden
 * file beside the target; the copy must pass `PRAGMA integrity_check` and the plant store's schema
 * check, is fsynced, then linked or renamed into place and its directory fsynced: the target name only
 * ever holds a whole, checked backup. The work runs in a child process (copy-process.ts).
 */

export interface BackupResult extends StoreFacts {
  /** The backup's absolute path. */
  file: string;
  bytes: number;
  seconds: number;
}

/** What the parent asks of copy-process.ts, and its answer. */
export interface CopyRequest {
  source: string;
  partial: string;
  target: string;
  replace: boolean;
}
export type CopyReply = ({ ok: true; bytes: number } & StoreFacts) | { ok: false; message: string };

export interface BackupOptions {
  /** Replace an existing file at the target (atomically: the old one stays whole until the new one is). */
  replace?: boolean;
  /** Ends the backup at once (the server stopping): the partial file is removed. */
  signal?: AbortSignal;
}

const COPY_JS = fileURLToPath(builtFile('src/store/sqlite/backup/copy-process.js'));
/** The most of the copying process's stderr kept for a message (a native crash says why there). */
const STDERR_LIMIT = 4096;

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/**
 * Where a path really is: every symbolic link on the way resolved, the file's own too when it exists, so
 * that two spellings of one file (a symlinked directory, `..`) compare equal.
 */
export function realPath(path: string): string {
  if (existsSync(path)) return realpathSync(path);
  const dir = dirname(path);
  return existsSync(dir) ? join(realpathSync(dir), basename(path)) : path;
}

/** Why a backup of `source` into `target` cannot start (checked before any work), or undefined. */
function cannotStart(source: string, target: string, replace: boolean): string | undefined {
  if (!existsSync(source)) return `there is no SQLite store at ${source} to back up`;
  // Compared where they really are: the store reached through a symlinked directory is the store all the same.
  const [realSource, realTarget] = [realPath(source), realPath(target)];
  if (['', '-wal', '-shm', '-journal'].some((suffix) => realTarget === `${realSource}${suffix}`)) {
    return `${target} is the store itself${realTarget === target ? '' : ` (${realTarget})`}: name another file`;
  }
  const dir = dirname(target);
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) return `the directory ${dir} does not exist`;
  if (!replace && existsSync(target)) return `${target} exists already`;
  // The copy is at most the size of the store (VACUUM INTO leaves free pages out): refuse rather than fill the disk.
  const needed = statSync(source).size + (statSync(`${source}-wal`, { throwIfNoEntry: false })?.size ?? 0);
  const { bavail, bsize } = statfsSync(dir);
  if (bavail * bsize < needed) return `not enough free space in ${dir}: ${mb(bavail * bsize)} free, the copy may need ${mb(needed)}`;
  return undefined;
}

/** Backs up the SQLite store at `databasePath` into `target`; rejects with an Error of one line saying why not. */
export async function backupSqlite(databasePath: string, target: string, options: BackupOptions = {}): Promise<BackupResult> {
  const source = resolve(databasePath);
  const file = resolve(target);
  const replace = options.replace === true;
  const refused = cannotStart(source, file, replace);
  if (refused) throw new Error(refused);
  const partial = partialName(file);
  const started = performance.now();
  try {
    const reply = await runCopy({ source, partial, target: file, replace }, options.signal);
    if (!reply.ok) throw new Error(reply.message);
    return { file, bytes: reply.bytes, schemaVersion: reply.schemaVersion, plants: reply.plants, seconds: (performance.now() - started) / 1000 };
  } finally {
    removeDatabaseFile(partial);
  }
}

/** Runs copy-process.ts to its end: its reply, or a failure saying how it ended. */
function runCopy(request: CopyRequest, signal: AbortSignal | undefined): Promise<CopyReply> {
  return new Promise((resolvePromise, reject) => {
    // No inherited flags (a test runner's): the process needs none.
    const child = fork(COPY_JS, [], { execArgv: [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'], signal, killSignal: 'SIGKILL' });
    let reply: CopyReply | undefined;
    let stderr = '';
    let failure: Error | undefined;
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = `${stderr}${chunk}`.slice(-STDERR_LIMIT)));
    child.once('message', (message: CopyReply) => (reply = message));
    child.on('error', (error) => (failure ??= signal?.aborted ? new Error('the backup was stopped') : error));
    // 'close': the process has exited and its stderr is read; only then is the partial file free to remove.
    child.once('close', (code, killed) => {
      if (reply) return resolvePromise(reply);
      const said = stderr.trim().split('\n').at(-1);
      reject(failure ?? new Error(`the backup process ended (${killed ?? `exit code ${code}`})${said ? `: ${said}` : ''}`));
    });
    child.send(request);
  });
}
