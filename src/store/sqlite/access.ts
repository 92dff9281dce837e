import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import { basename, dirname } from 'node:path';

/** Whether this process may access `path` in `mode` (fs.constants' R_OK, W_OK, X_OK), as the kernel says. */
export type MayAccess = (path: string, mode: number) => boolean;

const mayAccess: MayAccess = (path, mode) => {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
};

/** The codes of a store that could not be opened for want of a permission (SQLite's, and Node's for the folder and file it makes). */
const DENIED = /^(?:EACCES|EPERM|SQLITE_READONLY\w*|SQLITE_CANTOPEN\w*|SQLITE_PERM)$/;

/** The user this process runs as: its name and uid, or the uid alone when it has no name (a container's). */
function runningUser(): { name: string; said: string } {
  const uid = process.getuid?.() ?? -1;
  try {
    const { username } = userInfo();
    return { name: username, said: `${username} (uid ${uid})` };
  } catch {
    return { name: String(uid), said: `uid ${uid}` };
  }
}

/** Whose a file or folder is, and its mode: what an operator compares with the user. */
function ownership(path: string): string {
  const stat = statSync(path);
  return `it is uid ${stat.uid}'s, mode ${(stat.mode & 0o777).toString(8)}`;
}

/**
 * Why the SQLite store at `path` cannot be opened, when the reason is a permission: the folder or the file
 * that the user running the service (or the CLI) may not write, named with that user and how to mend it.
 * SQLite's own word (`SQLITE_READONLY_DIRECTORY`, `SQLITE_CANTOPEN`) names neither. Undefined when the
 * error is another, or when every permission looks right (the error is then said as it is).
 */
export function accessProblem(path: string, error: unknown, may: MayAccess = mayAccess): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !DENIED.test(code)) return undefined;
  const user = runningUser();
  const who = `the user ${user.said} that runs plant-store`;
  const folder = dirname(path);
  if (!existsSync(folder)) {
    let parent = dirname(folder);
    while (!existsSync(parent)) parent = dirname(parent);
    if (may(parent, constants.W_OK | constants.X_OK)) return undefined;
    return (
      `cannot make the folder ${folder}: ${parent} is not writable by ${who} (${ownership(parent)}). ` +
      `Make the folder and give it to that user: mkdir -p ${folder} && chown ${user.name} ${folder}`
    );
  }
  // Every refusal at once, so that one round of chown mends them all.
  const problems: string[] = [];
  if (!may(folder, constants.W_OK | constants.X_OK)) {
    const name = basename(path);
    problems.push(
      `the folder ${folder} is not writable by ${who} (${ownership(folder)}), and SQLite writes beside the ` +
        `database (${name}-wal, ${name}-shm). Give the folder to that user: chown ${user.name} ${folder}`,
    );
  }
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(file) && !may(file, constants.R_OK | constants.W_OK)) {
      problems.push(
        `the file ${file} is not readable and writable by ${who} (${ownership(file)}). ` + `Give it to that user: chown ${user.name} ${file}`,
      );
    }
  }
  return problems.length > 0 ? problems.join('; ') : undefined;
}
