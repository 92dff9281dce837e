import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createLogger } from '../../src/logging/logger.js';
import { openConnection } from '../../src/store/sqlite/connection.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { assertError, tempDir, testApp } from '../helpers.js';
import { LogSink } from '../log-sink.js';
import { until } from '../toolkit.js';

/**
 * /readyz speaks for writes (docs/api.md: 503 when the store "cannot take writes"): on SQLite, while its
 * writes fail as unavailable (here a lock held past busy_timeout, SQLITE_BUSY, which any machine can make;
 * a full disk, SQLITE_FULL, in test/reliability/disk-full.process.test.ts) and once its file was deleted
 * under it. The log says so once as it begins and once as it ends, not with each refused write (a full
 * disk refusing 20,000 writes once wrote 19 MB of error lines); each 503 still names its request.
 */

async function appOnFile() {
  const dir = tempDir(after);
  const path = join(dir, 'plants.db');
  const sink = new LogSink();
  // busy_timeout 50 ms: a write waits that long for the lock held below, then fails as unavailable.
  const store = SqliteStore.open(`file:${path}`, { synchronous: 'FULL', busyTimeoutMs: 50 });
  const app = await testApp(after, { store, logger: createLogger('info', sink) });
  const post = (id: number) => app.call('POST', '/plants', { body: { id, name: `plant ${id}` } });
  const ready = () => app.call('GET', '/readyz', { token: null });
  /** The log's lines at warn or above since the app started, but for the access lines. */
  const told = () => sink.lines().filter((line) => (line.level as number) >= 40);
  return { app, path, post, ready, told };
}

describe('GET /readyz while the SQLite store cannot take writes', () => {
  test('503 not_ready with Retry-After; one error line for every refused write; 200 again once writes can commit, with none sent', async () => {
    const { path, post, ready, told } = await appOnFile();
    assert.equal((await post(1)).statusCode, 200);
    assert.equal((await ready()).statusCode, 200);

    const other = openConnection(path);
    other.exec('BEGIN IMMEDIATE');
    try {
      const ids = new Set<string>();
      for (let id = 10; id < 30; id++) {
        const message = assertError(await post(id), 503, /unavailable/, 'store_unavailable');
        const requestId = /\(request id ([^)]+)\)/.exec(message)?.[1];
        assert.ok(requestId, `the 503 names its request: ${message}`);
        ids.add(requestId);
      }
      assert.equal(ids.size, 20, 'each its own');
      const notReady = await ready();
      assertError(notReady, 503, /cannot take writes/, 'not_ready');
      assert.equal(notReady.headers['retry-after'], '1');
      assertError(await ready(), 503, undefined, 'not_ready');
      const lines = told();
      assert.equal(lines.length, 1, JSON.stringify(lines));
      assert.equal(lines[0]!.level, 50);
      assert.match(String(lines[0]!.msg), /^store unavailable: .*SQLITE_BUSY/);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }

    // No write is sent: the probe itself (once a second at most) finds the store writable again.
    await until(async () => (await ready()).statusCode === 200, '/readyz to answer 200 again');
    const lines = told();
    assert.equal(lines.length, 2, JSON.stringify(lines));
    assert.match(String(lines[1]!.msg), /^store available again/);
    assert.equal((await post(2)).statusCode, 200);
  });

  test("the store's file deleted: writes 503 store_unavailable, /readyz 503, one error line naming the path", async () => {
    const { path, post, ready, told } = await appOnFile();
    assert.equal((await post(1)).statusCode, 200);
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`);

    // The file is compared with the one open once a second at most: from then on, nothing is acknowledged.
    await until(async () => (await ready()).statusCode === 503, '/readyz to answer 503');
    assertError(await ready(), 503, /cannot take writes/, 'not_ready');
    for (let id = 2; id < 12; id++) assertError(await post(id), 503, /request id/, 'store_unavailable');
    const lines = told();
    assert.equal(lines.length, 1, JSON.stringify(lines));
    assert.equal(lines[0]!.level, 50);
    assert.match(String(lines[0]!.msg), /the store's file was deleted or replaced while open: restart the service/);
    assert.ok(String(lines[0]!.msg).includes(path), String(lines[0]!.msg));
  });
});
