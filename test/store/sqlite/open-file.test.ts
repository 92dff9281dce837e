import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { SqliteStore } from '../../../src/store/sqlite/store.js';
import { tempDir } from '../../helpers.js';
import { numbered, plantsIn, storeWith } from './backup/files.js';

/**
 * A store opened while `plant-store restore` swaps its file: the open waits for the restore's exclusive
 * lock, then must serve the file now in place, not the old one it had opened, which has moved aside.
 */

const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');

test('a store opened during a restore serves the restored file, not the one set aside', async () => {
  const dir = tempDir(after);
  const path = await storeWith(
    join(dir, 'plants.db'),
    numbered(3, (id) => `old ${id}`),
  );
  const restored = await storeWith(
    join(dir, 'restored.db'),
    numbered(3, (id) => `restored ${id}`),
  );
  // What restore.ts does, holding the lock until the store being opened has the old file open (its
  // descriptor in /proc/<pid>/fd: the open then waits on the lock), so that the race is run every time,
  // on a slow machine too: leave WAL mode, take the exclusive lock, rename the old file aside and the new
  // one into place, then let go.
  const swap = `import Database from ${JSON.stringify(BETTER_SQLITE3)};
    import { readdirSync, readlinkSync, renameSync } from 'node:fs';
    const path = ${JSON.stringify(path)};
    const opened = () => readdirSync('/proc/' + process.ppid + '/fd').filter((fd) => {
      try { return readlinkSync('/proc/' + process.ppid + '/fd/' + fd) === path; } catch { return false; }
    }).length;
    const db = new Database(path);
    db.exec('PRAGMA busy_timeout = 0');
    db.exec('PRAGMA journal_mode = DELETE');
    db.exec('BEGIN EXCLUSIVE');
    const before = opened();
    process.stdout.write('locked\\n');
    // A minute at most: the test's open comes at once. Without it, exit 3: the test fails, the race not run.
    for (let waited = 0; opened() <= before && waited < 60000; waited += 5) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    const raced = opened() > before;
    renameSync(path, ${JSON.stringify(`${path}.aside`)});
    renameSync(${JSON.stringify(restored)}, path);
    db.exec('COMMIT');
    db.close();
    process.exitCode = raced ? 0 : 3;`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', swap], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  await once(child.stdout, 'data');
  // Blocks (busy_timeout) until the swap lets go of the lock.
  const store = SqliteStore.open(`file:${path}`, { synchronous: 'FULL', busyTimeoutMs: 10_000 });
  try {
    assert.equal((await store.plants.get(1n))?.plant.name, 'restored 1');
    await store.plants.put({ id: 4n, name: 'written after' });
  } finally {
    await store.close();
  }
  assert.deepEqual(await exited, [0, null], 'the swap happened while the store had the old file open');
  assert.equal(plantsIn(path).get('4'), 'written after', 'the write went to the file in place');
  assert.equal(plantsIn(`${path}.aside`).get('4'), undefined, 'and not to the one set aside');
});
