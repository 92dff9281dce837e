import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openConnection, type Connection } from '../../src/store/sqlite/connection.js';
import { tempDir } from '../helpers.js';
import { baseEnv, CLI_JS, cli } from '../process.js';
import { until } from '../toolkit.js';

/**
 * `plant-store backup` ended before it is done: Ctrl-C, or the command killed. No file at the backup's name
 * that the command did not report, and no hidden partial file (as big as the store) left behind for ever.
 */

/** A migrated store, and a connection that holds it in exclusive locking mode: a backup's copy waits (busy_timeout) until it closes. */
async function heldStore(dir: string): Promise<{ databaseUrl: string; hold: Connection }> {
  const store = join(dir, 'plants.db');
  const databaseUrl = `file:${store}`;
  assert.equal((await cli(databaseUrl, 'migrate')).code, 0);
  const hold = openConnection(store, { fileMustExist: true });
  hold.exec('PRAGMA locking_mode = EXCLUSIVE');
  hold.exec('BEGIN IMMEDIATE');
  hold.exec('COMMIT');
  after(() => hold.close());
  return { databaseUrl, hold };
}

/** `plant-store backup FILE` in a process group of its own (as a terminal runs it), its stderr and its exit. */
function backupInBackground(databaseUrl: string, file: string) {
  const child = spawn(process.execPath, [CLI_JS, 'backup', file], {
    env: baseEnv({ DATABASE_URL: databaseUrl }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return { pid: child.pid!, exited, stderr: () => stderr };
}

/** The pids of a process's children, from /proc (Linux). */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // pid (comm) state ppid …: the name in parentheses may hold spaces, so read after its last ")".
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) found.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** Whether a process runs (a zombie no one has reaped yet has ended: a container's init may never reap it). */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};

const partials = (dir: string) => readdirSync(dir).filter((name) => name.includes('.partial-'));

describe('a backup ended before it is done', () => {
  it('Ctrl-C (SIGINT to the command and its copying process) says so in one line and leaves no file, partial or whole', async () => {
    const dir = tempDir(after);
    const { databaseUrl, hold } = await heldStore(dir);
    const target = join(dir, 'copy.db');
    const backup = backupInBackground(databaseUrl, target);
    await until(() => partials(dir).length > 0, 'the copy to begin (its partial file)');
    process.kill(-backup.pid, 'SIGINT');
    const exit = await backup.exited;
    hold.close();
    assert.equal(exit.code, 1, backup.stderr());
    assert.equal(backup.stderr().trimEnd().split('\n').length, 1, backup.stderr());
    assert.match(backup.stderr(), /^plant-store: the backup (was stopped \(SIGINT\)|process ended \(SIGINT\))/);
    assert.deepEqual(partials(dir), [], 'no partial file left');
    assert.deepEqual(
      readdirSync(dir).filter((name) => name.startsWith('copy')),
      [],
      'no backup',
    );
  });

  it('the command killed (SIGKILL), its copying process leaves neither the backup nor its partial file, and ends', async () => {
    const dir = tempDir(after);
    const { databaseUrl, hold } = await heldStore(dir);
    const target = join(dir, 'copy.db');
    const backup = backupInBackground(databaseUrl, target);
    await until(() => partials(dir).length > 0, 'the copy to begin (its partial file)');
    const [copying] = await until(() => {
      const children = childrenOf(backup.pid);
      return children.length > 0 && children;
    }, 'the copying process');
    process.kill(backup.pid, 'SIGKILL');
    assert.equal((await backup.exited).signal, 'SIGKILL');
    // The orphan copies on once the store is free, then finds no one to report to.
    hold.close();
    await until(() => !alive(copying!), 'the orphaned copying process to end');
    assert.deepEqual(partials(dir), [], 'no partial file left');
    assert.deepEqual(
      readdirSync(dir).filter((name) => name.startsWith('copy')),
      [],
      'no backup the command never reported',
    );
  });
});
