import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SqliteStore } from '../../../src/store/sqlite/store.js';
import { tempDir } from '../../helpers.js';
import { numbered, plantsIn, storeWith } from './backup/files.js';

/**
 * A store opened while `plant-store restore` swaps its file: the open waits for the restore's exclusive
 * lock, then must serve the file now in place, not the old one it had opened, which has moved aside.
 */

const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');
const OPEN_FILE = fileURLToPath(new URL('../../../src/store/sqlite/open-file.js', import.meta.url));

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
    // The file it holds is the one at the path: not taken for one deleted or replaced (store/sqlite/health.ts).
    await store.ping();
  } finally {
    await store.close();
  }
  assert.deepEqual(await exited, [0, null], 'the swap happened while the store had the old file open');
  assert.equal(plantsIn(path).get('4'), 'written after', 'the write went to the file in place');
  assert.equal(plantsIn(`${path}.aside`).get('4'), undefined, 'and not to the one set aside');
});

/**
 * The workers of WEB_CONCURRENCY > 1 open a new store at the same moment, and each switches the new file to
 * WAL, which SQLite refuses at once (SQLITE_BUSY, no busy_timeout) to the one that holds a shared lock while
 * the other takes the exclusive one: a worker could not start, 1 start in 6 with two workers on Node 24, 1 in
 * 60 on Node 20 (two CI failures). Two processes here open one new file at the same instant, round after
 * round; before the open waited as busy_timeout does, about 1 round in 20 failed.
 */
test('two processes opening a new store at the same instant both open it, every time', async () => {
  const dir = tempDir(after);
  const rounds = 200;
  const paths = Array.from({ length: rounds }, (_, i) => join(dir, `new-${i}.db`));
  // Both start their rounds together at the same clock reading, one every 15 ms (an open takes a few).
  const start = Date.now() + 1500;
  const opener = `import { openStoreFile } from ${JSON.stringify(OPEN_FILE)};
    const paths = ${JSON.stringify(paths)};
    const failures = [];
    const now = () => performance.timeOrigin + performance.now();
    for (let i = 0; i < paths.length; i++) {
      const at = ${start} + i * 15;
      // Asleep until the last 2 ms, then awake to the instant (a sleep wakes a millisecond late or so).
      while (now() < at - 2) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
      while (now() < at);
      try {
        openStoreFile(paths[i], { synchronous: 'FULL', busyTimeoutMs: 5000 }).close();
      } catch (error) {
        failures.push(i + ': ' + error.code + ' ' + error.message);
      }
    }
    process.stdout.write(JSON.stringify(failures));`;
  const run = async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', opener], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    // 'close' (not 'exit'): every byte of its stdout has been read by then.
    const [code] = (await once(child, 'close')) as [number | null];
    assert.equal(code, 0, 'the opener ran to its end');
    return JSON.parse(out) as string[];
  };
  const [first, second] = await Promise.all([run(), run()]);
  assert.deepEqual([...first, ...second], [], 'every open of every round succeeded');
});
