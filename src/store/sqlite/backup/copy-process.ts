import { existsSync, linkSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { openConnection, prepare } from '../connection.js';
import type { CopyReply, CopyRequest } from './backup.js';
import { checkStore, type StoreFacts } from './check.js';
import { fsyncPath, removeDatabaseFile } from './files.js';
import { createPrivateFile } from '../private-files.js';

/**
 * One backup, in a process of its own (started by backup.ts): SQLite's work here takes seconds on a big
 * store and cannot be interrupted from JavaScript, so a process keeps it off the server's event loop, and
 * lets a stopping server end it at once (a thread would finish its statement first).
 */

/**
 * The process that asked, gone (killed: a server's SIGKILL, the OOM killer, a `kill` of the command)? Read
 * from the parent's pid, which the kernel changes at once when this process is orphaned: `process.connected`
 * would say so only once the event loop turns, and the copy below never lets it turn until it is done.
 */
const PARENT = process.ppid;
const parentGone = () => process.ppid !== PARENT;
const ABANDONED = 'the process that asked for the backup has gone';

/** Puts the checked copy in place: atomically, and without replacing an existing file unless asked. */
function install(partial: string, target: string, replace: boolean): void {
  if (replace) return renameSync(partial, target);
  // link() fails if the target exists (rename would replace it): no window in which another file could be lost.
  try {
    linkSync(partial, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new Error(`${target} exists already`);
    // A file system without hard links (some network and FAT ones): look, then rename.
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
    if (existsSync(target)) throw new Error(`${target} exists already`);
    return renameSync(partial, target);
  }
  unlinkSync(partial);
}

function copy({ source, partial, target, replace }: CopyRequest): CopyReply {
  // Made before the store is read (its first statement may wait for a lock): from here on the partial
  // file exists for whoever removes it, this process or the one that asked.
  createPrivateFile(partial);
  const db = openConnection(source, { fileMustExist: true });
  db.exec('PRAGMA busy_timeout = 10000');
  // The copy is flushed once, whole, below: no fsync while SQLite writes it.
  db.exec('PRAGMA synchronous = OFF');
  // One read transaction (WAL): the copy is the store as it was when the statement began, and the
  // server's writes go on meanwhile. VACUUM INTO writes a compact file in rollback-journal mode, with no
  // -wal to go with it, into the empty file made above, private (it holds the webhook secrets).
  prepare(db, 'VACUUM INTO ?').run(partial);
  db.close();
  // No integrity check (seconds to minutes on a big store) for a backup no one will see finished.
  if (parentGone()) throw new Error(ABANDONED);
  const written = openConnection(partial, { readonly: true, fileMustExist: true });
  let facts: StoreFacts;
  try {
    facts = checkStore(written);
  } catch (error) {
    // Said of the store: the copy holds what it holds.
    throw new Error(`the copy of ${source} ${error instanceof Error ? error.message : String(error)}; no backup was written`);
  } finally {
    written.close();
  }
  fsyncPath(partial);
  // The process that asked has gone (a server killed mid-backup): leave no file it did not see finished.
  if (parentGone()) throw new Error(ABANDONED);
  install(partial, target, replace);
  fsyncPath(dirname(target));
  return { ok: true, bytes: statSync(target).size, ...facts };
}

process.once('message', (request: CopyRequest) => {
  let reply: CopyReply;
  try {
    reply = copy(request);
  } catch (error) {
    // Removed here too: a parent that has gone (killed) cannot remove it, as it does when it lives on.
    removeDatabaseFile(request.partial);
    reply = { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  if (process.connected) process.send!(reply, () => process.disconnect());
});
