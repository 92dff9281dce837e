import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SqliteStore } from '../../../src/store/sqlite/store.js';
import { StoreUnavailableError } from '../../../src/store/store.js';
import { tempDir } from '../../helpers.js';
import { watchThreads } from '../../toolkit.js';

/**
 * The SQLite writer thread (store/sqlite/writer/thread.ts) dying with a batch in hand: every write of that
 * batch fails as unavailable (none hangs, none is answered as written unless it was), what was committed
 * before stays, and the next write starts another thread and commits.
 */

describe('the SQLite writer thread', () => {
  it('dies in the middle of a batch: the batch fails as unavailable, and the next write starts another thread', async (t) => {
    const threads = watchThreads((restore) => t.after(restore));
    const store = SqliteStore.open(`file:${join(tempDir(after), 'p.db')}`, { synchronous: 'FULL', busyTimeoutMs: 5000 });
    after(() => store.close());
    await store.plants.put({ id: 1, name: 'before' });
    assert.equal(threads.length, 1, 'the first write started the thread');

    // The thread is stopped the moment the next batch is handed to it, before it can have committed.
    const doomed = threads[0]!;
    doomed.afterPost = (message) => {
      if (!Array.isArray(message)) return;
      doomed.afterPost = undefined;
      void doomed.terminate();
    };
    const ids = Array.from({ length: 500 }, (_, i) => 100 + i);
    const settled = await Promise.allSettled(ids.map((id) => store.plants.put({ id, name: `in the batch ${id}` })));
    const failed = settled.flatMap((outcome, i) => (outcome.status === 'rejected' ? [[ids[i]!, outcome.reason as unknown] as const] : []));
    assert.ok(failed.length > 0, 'the batch in hand failed');
    for (const [id, reason] of failed) {
      assert.ok(reason instanceof StoreUnavailableError, `${id}: ${String(reason)}`);
      assert.match(reason.message, /SQLite writer thread failed/);
    }

    // Another thread takes the next write; the writes answered as written are there, the failed batch's are not.
    await store.plants.put({ id: 2, name: 'after' });
    assert.ok(threads.length >= 2, `${threads.length} threads started`);
    assert.equal((await store.plants.get(1))?.plant.name, 'before', 'what was committed before stays');
    assert.equal((await store.plants.get(2))?.plant.name, 'after');
    for (const [i, outcome] of settled.entries()) {
      if (outcome.status === 'fulfilled') assert.equal((await store.plants.get(ids[i]!))?.plant.name, `in the batch ${ids[i]}`);
    }
    for (const [id] of failed) assert.equal(await store.plants.get(id), undefined, `${id}: failed, and not written`);
  });
});
