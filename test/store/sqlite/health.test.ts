import assert from 'node:assert/strict';
import { copyFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openConnection } from '../../../src/store/sqlite/connection.js';
import { SqliteStore } from '../../../src/store/sqlite/store.js';
import { StoreUnavailableError } from '../../../src/store/store.js';
import { tempDir } from '../../helpers.js';
import { until } from '../../toolkit.js';

/**
 * The SQLite store's health (store/sqlite/health.ts): writes that fail as unavailable make ping() (so
 * /readyz) fail until a write commits again, which ping() itself tries once a second, so readiness comes
 * back with no write coming; the change is told once each way. Writes fail here on a lock another
 * connection holds past busy_timeout (SQLITE_BUSY, one of the "unavailable" codes, as SQLITE_FULL is),
 * which any machine can do; test/reliability/disk-full.process.test.ts fills a real disk. And the store's
 * file deleted or replaced under it: every write refused, ping() failing, told once, naming the path.
 */

/** A store whose writes wait 50 ms for a lock (busy_timeout) before failing, and every change of its health heard. */
function openStore(dir: string) {
  const path = join(dir, 'plants.db');
  const store = SqliteStore.open(`file:${path}`, { synchronous: 'FULL', busyTimeoutMs: 50 });
  after(() => store.close());
  const changes: Array<StoreUnavailableError | undefined> = [];
  store.onHealthChange((problem) => changes.push(problem));
  return { store, path, changes };
}

/** Whether ping() resolves now. */
const pings = (store: SqliteStore) =>
  store.ping().then(
    () => true,
    () => false,
  );

describe('the SQLite store refusing writes as unavailable', () => {
  it('is not ready while they fail, says so once, and is ready again once the lock is gone, with no write coming', async () => {
    const { store, path, changes } = openStore(tempDir(after));
    await store.plants.put({ id: 1, name: 'before' });
    await store.ping();

    const other = openConnection(path);
    other.exec('BEGIN IMMEDIATE');
    try {
      const refused = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.plants.put({ id: 10 + i, name: 'refused' })));
      for (const outcome of refused) {
        assert.equal(outcome.status, 'rejected');
        const reason: unknown = outcome.reason;
        assert.ok(reason instanceof StoreUnavailableError && reason.reported, String(reason));
      }
      await assert.rejects(store.ping(), (error) => error instanceof StoreUnavailableError && /SQLITE_BUSY/.test(error.message));
      // A second ping within the second is refused without trying a write; later ones try it (and fail).
      await assert.rejects(store.ping(), StoreUnavailableError);
      assert.equal(changes.length, 1, '20 refused writes and the pings: told once');
      assert.match(changes[0]!.message, /SQLITE_BUSY/);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }

    // No write comes: ping() tries one (at most once a second) and is ready again.
    await until(() => pings(store), 'ping() to succeed once the lock is gone');
    assert.deepEqual(changes.slice(1), [undefined], 'told once that writes commit again');
    await store.plants.put({ id: 2, name: 'after' });
    assert.equal((await store.plants.get(2))?.plant.name, 'after');
    assert.equal(await store.plants.get(10), undefined, 'no refused write was stored');
  });

  it('a write that commits ends it too; a batch that writes no row (it commits on a full disk too) does not', async () => {
    const { store, path, changes } = openStore(tempDir(after));
    const other = openConnection(path);
    other.exec('BEGIN IMMEDIATE');
    await assert.rejects(store.plants.put({ id: 1, name: 'refused' }), StoreUnavailableError);
    other.exec('ROLLBACK');
    other.close();
    assert.deepEqual(await store.webhooks.claimDue(10, 60_000), [], 'no message due: no row changed');
    assert.equal(changes.length, 1, 'still unwritable');
    await store.plants.put({ id: 2, name: 'committed' });
    assert.equal(changes.length, 2);
    assert.equal(changes[1], undefined);
    await store.ping();
  });
});

describe("the SQLite store's file deleted or replaced while open", () => {
  /** Waits for ping() to fail (the file is compared once a second at most), then checks the refusals. */
  async function assertRefused(store: SqliteStore, path: string, changes: Array<StoreUnavailableError | undefined>) {
    const error = await until(
      () =>
        store.ping().then(
          () => undefined,
          (reason: unknown) => reason,
        ),
      'ping() to fail',
    );
    assert.ok(error instanceof StoreUnavailableError && error.reported, String(error));
    assert.match(error.message, /deleted or replaced while open: restart the service/);
    assert.ok(error.message.includes(path), error.message);
    await assert.rejects(store.plants.put({ id: 3, name: 'refused' }), (reason) => reason === error);
    await assert.rejects(store.ping(), (reason) => reason === error);
    assert.deepEqual(changes, [error], 'told once');
  }

  it('deleted (the file, its -wal and -shm): writes and ping() refused for good, told once with the path', async () => {
    const { store, path, changes } = openStore(tempDir(after));
    await store.plants.put({ id: 1, name: 'before' });
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`);
    await assertRefused(store, path, changes);
  });

  it('replaced by another file: the same', async () => {
    const dir = tempDir(after);
    const { store, path, changes } = openStore(dir);
    await store.plants.put({ id: 1, name: 'before' });
    copyFileSync(path, join(dir, 'copy.db'));
    renameSync(join(dir, 'copy.db'), path);
    await assertRefused(store, path, changes);
  });

  it('left in place: writes and ping() go on, however often asked', async () => {
    const { store, changes } = openStore(tempDir(after));
    for (let id = 1; id <= 50; id++) {
      await store.plants.put({ id, name: `plant ${id}` });
      await store.ping();
    }
    assert.deepEqual(changes, []);
  });
});
