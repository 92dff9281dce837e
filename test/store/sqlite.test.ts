import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore, sqlitePath } from '../../src/store/sqlite.js';
import { openSqlite, tempDir } from '../helpers.js';
import { storeContract } from './contract.js';

storeContract('sqlite', async () => openSqlite(tempDir(after)));

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
    assert.deepEqual(await second.plants.get(2n ** 62n), { id: 2n ** 62n, name: 'kept' });
    await second.close();
    const db = new Database(join(dir, 'p.db'));
    assert.deepEqual(db.prepare('SELECT version FROM schema_migrations').pluck().all(), [1]);
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    db.close();
  });

  it('fails every write of a batch whose commit fails, as unavailable', async () => {
    const path = join(tempDir(after), 'plants.db');
    const store = SqliteStore.open(`file:${path}`, { synchronous: 'FULL', busyTimeoutMs: 100 });
    // Another connection holds the write lock past the busy timeout: the batch cannot commit, so it
    // must fail whole, with nothing acknowledged. (Plant writes commit on the writer thread's own
    // connection, so the lock is what can stop them.)
    const blocker = new Database(path);
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
    assert.equal(await store.plants.put({ id: 1, name: 'a' }), 'created');
    await store.close();
  });
});
