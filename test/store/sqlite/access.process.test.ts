import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { chmodSync, mkdirSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { tempDir } from '../../helpers.js';
import { baseEnv, CLI_JS } from '../../process.js';
import { needs } from '../../toolkit.js';

/**
 * A data folder the service's user may not write, as an operator meets it: the folder made by root (or
 * by hand), the service run as its own user. Run as root (CI), the CLI and the server run as the user
 * nobody (chmod stops no root), in a folder of root's; as any other user, in a folder made read-only.
 */

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;

async function otherUser(): Promise<{ said: string; skip: string | false }> {
  if (!asRoot) return { said: `${userInfo().username} (uid ${process.getuid!()})`, skip: false };
  try {
    const uid = (await run('id', ['-u', 'nobody'])).stdout.trim();
    // The checkout must be readable to that user (not under a home folder of mode 700).
    await run('runuser', ['-u', 'nobody', '--', 'test', '-r', CLI_JS]);
    return { said: `nobody (uid ${uid})`, skip: false };
  } catch (error) {
    return { said: '', skip: `cannot run the CLI as the user nobody: ${(error as Error).message}` };
  }
}

/** plant-store ...args as the user who may not write the folder; its exit code and stderr. */
function plantStore(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const [file, argv] = asRoot ? ['runuser', ['-u', 'nobody', '--', process.execPath, CLI_JS, ...args]] : [process.execPath, [CLI_JS, ...args]];
  const child = spawn(file, argv, { env: baseEnv({ PORT: '0', HOST: '127.0.0.1', ...env }), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    }),
  );
}

const user = await otherUser();
const folderSkip = needs("the read-only data folder's messages", user.skip);

describe('a data folder the user running plant-store may not write', { skip: folderSkip, timeout: 120_000 }, () => {
  const dir = tempDir(after);
  // A folder others may enter, as /srv is (mkdtemp's is 700).
  chmodSync(dir, 0o755);
  const folder = join(dir, 'data');
  mkdirSync(folder);
  const databaseUrl = `file:${join(folder, 'plant-store.db')}`;
  // Empty: the test's cleanup removes it, read-only or not.
  chmodSync(folder, asRoot ? 0o755 : 0o555);
  const named = (stderr: string) => {
    assert.match(stderr, new RegExp(`the folder ${folder} is not writable by the user ${user.said.replace(/[()]/g, '\\$&')} that runs plant-store`));
    assert.match(stderr, new RegExp(`chown ${user.said.split(' ')[0]} ${folder}`));
    assert.doesNotMatch(stderr, /SQLITE_READONLY_DIRECTORY|SQLITE_CANTOPEN|EACCES/);
  };

  it('the CLI names the folder and the user who needs to write it, and fails', async () => {
    const { code, stderr } = await plantStore(['migrate'], { DATABASE_URL: databaseUrl });
    assert.equal(code, 1, stderr);
    assert.match(stderr, /^plant-store: DATABASE_URL: cannot open file:/);
    named(stderr);
  });

  it('the server names them at start, and stops', async () => {
    const { code, stderr } = await plantStore(['serve'], { DATABASE_URL: databaseUrl });
    assert.notEqual(code, 0, stderr);
    assert.match(stderr, /cannot start: DATABASE_URL: cannot open file:/);
    named(stderr);
  });
});

// Run as root only: a file of one's own is made private (0600) at open, so only another user's file stays unwritable.
const fileSkip = needs("a database file of another user's messages", user.skip || (!asRoot && 'a file of another user needs root to make'));
describe('a database file the user running plant-store may not write, in a folder it may', { skip: fileSkip, timeout: 120_000 }, () => {
  const dir = tempDir(after);
  chmodSync(dir, 0o755);
  const folder = join(dir, 'data');
  mkdirSync(folder);
  const path = join(folder, 'plant-store.db');
  const databaseUrl = `file:${path}`;
  const named = (stderr: string) => {
    assert.match(
      stderr,
      new RegExp(`the file ${path} is not readable and writable by the user ${user.said.replace(/[()]/g, '\\$&')} that runs plant-store`),
    );
    assert.match(stderr, new RegExp(`chown ${user.said.split(' ')[0]} ${path}`));
    assert.doesNotMatch(stderr, /SQLITE_READONLY|SQLITE_CANTOPEN|EACCES/);
  };

  it('made by another user (or left read-only): SQLite would open it read-only without a word; the CLI and the server name it, and fail', async () => {
    // The store made (and closed) by root.
    const made = await run(process.execPath, [CLI_JS, 'migrate'], { env: baseEnv({ DATABASE_URL: databaseUrl }) });
    assert.match(made.stderr, /plant-store\.db/);
    // A folder anyone may write (as a shared /tmp is), the file root's and read-only.
    chmodSync(folder, 0o777);
    chmodSync(path, 0o444);

    const cli = await plantStore(['plants', 'create', '--id', '1', '--name', 'Fern'], { DATABASE_URL: databaseUrl });
    assert.equal(cli.code, 1, cli.stderr);
    named(cli.stderr);
    const server = await plantStore(['serve'], { DATABASE_URL: databaseUrl });
    assert.notEqual(server.code, 0, server.stderr);
    assert.match(server.stderr, /cannot start: DATABASE_URL: cannot open file:/);
    named(server.stderr);
  });
});
