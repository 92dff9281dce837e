import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { tempDir } from '../helpers.js';
import { baseEnv, CLI_JS, cli } from '../process.js';
import { plantsIn } from '../store/sqlite/backup/files.js';
import { needs } from '../toolkit.js';

/**
 * docs/production.md runs the service as a user of its own (`User=plant-store`) and docs/backups.md says
 * `npx plant-store restore FILE`, which an operator runs as root (sudo): the restored store must then
 * belong to the service's user as the replaced one did, or the service no longer opens it.
 */

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;

async function nobody(): Promise<{ uid: number; gid: number } | string> {
  if (!asRoot) return 'files of another user need root to make';
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', 'nobody']), run('id', ['-g', 'nobody'])]);
    // The checkout must be readable to that user (not under a home folder of mode 700).
    await run('runuser', ['-u', 'nobody', '--', 'test', '-r', CLI_JS]);
    return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
  } catch (error) {
    return `cannot run the CLI as the user nobody: ${(error as Error).message}`;
  }
}

/** plant-store ...args as the service's user (nobody). */
const asService = (databaseUrl: string, ...args: string[]) =>
  run('runuser', ['-u', 'nobody', '--', process.execPath, CLI_JS, ...args], { env: baseEnv({ DATABASE_URL: databaseUrl }) });

const user = await nobody();
const skip = needs("a restore by root of a store of the service's user", typeof user === 'string' && user);

test("restored by root, the store keeps the replaced store's owner, and the service's user writes it", { skip }, async () => {
  const service = user as { uid: number; gid: number };
  const dir = tempDir(after);
  // A folder others may enter, as /srv is (mkdtemp's is 700); the data folder is the service's.
  chmodSync(dir, 0o755);
  const folder = join(dir, 'data');
  mkdirSync(folder);
  chownSync(folder, service.uid, service.gid);
  const store = join(folder, 'plant-store.db');
  const databaseUrl = `file:${store}`;
  await asService(databaseUrl, 'migrate');
  await asService(databaseUrl, 'plants', 'create', '--id', '1', '--name', 'Fern');
  const backup = join(dir, 'backup.db');
  // As docs/backups.md writes them, run by root.
  assert.equal((await cli(databaseUrl, 'backup', backup)).code, 0);
  await asService(databaseUrl, 'plants', 'create', '--id', '2', '--name', 'Moss');
  const restored = await cli(databaseUrl, 'restore', backup);
  assert.equal(restored.code, 0, restored.stderr);

  const owner = statSync(store);
  assert.deepEqual([owner.uid, owner.gid], [service.uid, service.gid], 'the restored store is the service user’s');
  assert.equal(owner.mode & 0o777, 0o600);
  await asService(databaseUrl, 'plants', 'create', '--id', '3', '--name', 'Ivy');
  assert.deepEqual([...plantsIn(store).keys()], ['1', '3']);
});
