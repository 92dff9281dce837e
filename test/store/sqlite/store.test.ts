import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { join } from 'node:path';
import { openConnection, prepare } from '../../../src/store/sqlite/connection.js';
import { sqlitePath } from '../../../src/store/database-url.js';
import { SQLITE_MIGRATIONS } from '../../../src/store/sqlite/migrations.js';
import { SqliteStore } from '../../../src/store/sqlite/store.js';
import { StoreBusyError, StoreUnavailableError, type Store } from '../../../src/store/store.js';
import { atExit, listPlants, openSqlite, tempDir } from '../../helpers.js';
import { storeContract } from '../contract.js';
import { eventContract } from '../event-contract.js';
import { importContract } from '../import-contract.js';
import { idempotencyContract } from '../idempotency-contract.js';
import { searchContract } from '../search-contract.js';
import { searchWalkContract } from '../search-walk-contract.js';
import { searchDifferentialContract } from '../search-differential-contract.js';
import { searchIndexContract } from '../search-index-contract.js';
import { webhookContract } from '../webhook-contract.js';
import { webhookInt64Contract } from '../webhook-int64-contract.js';

storeContract('sqlite', async () => openSqlite(tempDir(atExit)));
webhookContract('sqlite', async () => openSqlite(tempDir(atExit)));
webhookInt64Contract('sqlite', async () => openSqlite(tempDir(atExit)));
searchContract('sqlite', async () => openSqlite(tempDir(atExit)));
searchWalkContract('sqlite', async () => openSqlite(tempDir(atExit)));
searchDifferentialContract('sqlite', async () => openSqlite(tempDir(atExit)), {
  openPair: async () => {
    const dir = tempDir(atExit);
    return [openSqlite(dir), openSqlite(dir)];
  },
});
// A scan window of 4: the walk a name order takes first ends at once (the index finds the page), and a short q's pages come back short.
searchDifferentialContract(
  'sqlite, a scan window of 4',
  async () => SqliteStore.open(`file:${join(tempDir(atExit), 'plants.db')}`, { synchronous: 'NORMAL', busyTimeoutMs: 5000, scanWindow: 4 }),
  { shortPages: true },
);
searchIndexContract(
  'sqlite',
  async () => openSqlite(tempDir(atExit)),
  async () => {
    const dir = tempDir(atExit);
    return [openSqlite(dir), openSqlite(dir)];
  },
);
/** Each contract store's file, for the event contract to reach its tables. */
const storeFiles = new WeakMap<Store, string>();
eventContract(
  'sqlite',
  async () => {
    const dir = tempDir(atExit);
    const store = openSqlite(dir);
    storeFiles.set(store, join(dir, 'plants.db'));
    return store;
  },
  async (store, id, at) => {
    const db = openConnection(storeFiles.get(store)!);
    try {
      prepare(db, 'UPDATE events SET at = ? WHERE id = ?').run(at, id);
    } finally {
      db.close();
    }
  },
);
importContract('sqlite', async () => openSqlite(tempDir(atExit)));
idempotencyContract('sqlite', async () => openSqlite(tempDir(atExit)));

describe('sqlite store', () => {
  it('reads file: URLs in their three spellings', () => {
    assert.equal(sqlitePath('file:/tmp/x.db'), '/tmp/x.db');
    assert.equal(sqlitePath('file:///tmp/x.db'), '/tmp/x.db');
    assert.equal(sqlitePath('file:./data/x.db'), join(process.cwd(), 'data/x.db'));
  });

  it('creates the directory, applies migrations once, and keeps data across reopen', async () => {
    const dir = join(tempDir(after), 'nested', 'deeper');
    const url = `file:${join(dir, 'p.db')}`;
    const first = SqliteStore.open(url, { synchronous: 'FULL', busyTimeoutMs: 1000 });
    await first.plants.put({ id: 2n ** 62n, name: 'kept' });
    await first.close();
    const second = SqliteStore.open(url, { synchronous: 'FULL', busyTimeoutMs: 1000 });
    assert.deepEqual((await second.plants.get(2n ** 62n))?.plant, { id: 2n ** 62n, name: 'kept' });
    await second.close();
    const db = openConnection(join(dir, 'p.db'));
    assert.deepEqual(
      prepare(db, 'SELECT version FROM schema_migrations').pluck().all(),
      SQLITE_MIGRATIONS.map((m) => m.version),
    );
    assert.equal(prepare(db, 'PRAGMA journal_mode').pluck().get(), 'wal');
    db.close();
  });

  it('fails every write of a batch whose commit fails, as unavailable', async () => {
    const path = join(tempDir(after), 'plants.db');
    const store = SqliteStore.open(`file:${path}`, { synchronous: 'FULL', busyTimeoutMs: 100 });
    // Another connection holds the write lock past the busy timeout: the batch cannot commit, so it
    // must fail whole, with nothing acknowledged. (Plant writes commit on the writer thread's own
    // connection, so the lock is what can stop them.)
    const blocker = openConnection(path);
    blocker.exec('BEGIN IMMEDIATE');
    const results = await Promise.allSettled([store.plants.put({ id: 1, name: 'a' }), store.plants.put({ id: 2, name: 'b' })]);
    blocker.exec('ROLLBACK');
    blocker.close();
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    for (const r of results) assert.equal((r as PromiseRejectedResult).reason.name, 'StoreUnavailableError');
    assert.equal(await store.plants.get(1), undefined);
    // The store recovers once the lock is gone.
    assert.equal((await store.plants.put({ id: 1, name: 'a' })).outcome, 'created');
    await store.close();
  });
});

describe('sqlite writer thread', () => {
  it('refuses writes beyond WRITE_QUEUE_LIMIT at once, as busy, and accepts them again once the queue drains', async () => {
    const store = SqliteStore.open(`file:${join(tempDir(after), 'p.db')}`, { synchronous: 'FULL', busyTimeoutMs: 1000, writeQueueLimit: 5 });
    try {
      const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.plants.put({ id: i, name: `p${i}` })));
      const accepted = results.filter((r) => r.status === 'fulfilled');
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.equal(accepted.length, 5, 'the first five wait in the queue');
      assert.equal(refused.length, 15);
      for (const r of refused) {
        assert.ok(r.reason instanceof StoreBusyError);
        assert.ok(r.reason instanceof StoreUnavailableError, 'answered like any outage: 503 with Retry-After');
      }
      assert.equal((await listPlants(store.plants, { limit: 100 })).length, 5, 'exactly the accepted writes are stored');
      assert.equal((await store.plants.put({ id: 99, name: 'later' })).outcome, 'created');
    } finally {
      await store.close();
    }
  });

  it('close() resolves for every caller, also while a batch is in flight, after the writes accepted before it', async () => {
    const store = openSqlite(tempDir(after));
    const put = store.plants.put({ id: 1, name: 'a' });
    const token = store.tokens.create({ id: 't1', name: 'n', hash: Buffer.alloc(32, 9), scopes: ['plants:read'] });
    const closes = [store.close(), store.close()];
    assert.equal((await put).outcome, 'created');
    assert.equal((await token).name, 'n');
    await Promise.all(closes);
    await store.close();
    await assert.rejects(store.plants.put({ id: 2, name: 'b' }), StoreUnavailableError);
  });

  it('commits token writes through the same thread as plant writes', async () => {
    const store = openSqlite(tempDir(after));
    try {
      const [created, duplicate] = await Promise.allSettled([
        store.tokens.create({ id: 'x1', name: 'same', hash: Buffer.alloc(32, 1), scopes: ['plants:read'] }),
        store.tokens.create({ id: 'x2', name: 'same', hash: Buffer.alloc(32, 2), scopes: ['plants:read'] }),
        store.plants.put({ id: 5, name: 'five' }),
      ]);
      assert.equal(created.status, 'fulfilled');
      assert.equal(duplicate.status, 'rejected', 'a name in use fails only its own write, not the batch');
      assert.deepEqual((await store.plants.get(5))?.plant, { id: 5, name: 'five' });
      assert.equal(await store.tokens.revoke('same'), true);
      assert.equal(await store.tokens.count(), 1);
    } finally {
      await store.close();
    }
  });
});
