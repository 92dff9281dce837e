import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it, test } from 'node:test';
import { Metrics } from '../../src/metrics/registry.js';
import { openStore, type StoreSettings } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../helpers.js';
import { postgresUnavailableReason, TestPostgres } from '../store/postgres/pg-server.js';
import { histogramOf, parse } from './scrape.js';
import { needs } from '../toolkit.js';

// Started before any test is declared: the file's after() hooks run once its tests end.
const skipReason = needs('PostgreSQL commit metrics', postgresUnavailableReason());
const server = skipReason ? undefined : await TestPostgres.start(after);

/** plant_store_commit_batch_size and _duration_seconds of a registry, as scraped. */
async function commits(metrics: Metrics) {
  const { metrics: m } = await parse((await metrics.scrape()).body);
  return { sizes: histogramOf(m, 'plant_store_commit_batch_size')!, seconds: histogramOf(m, 'plant_store_commit_duration_seconds')! };
}

const settings = (databaseUrl: string): StoreSettings => ({
  databaseUrl,
  sqliteSynchronous: 'FULL',
  dbTimeoutMs: 5000,
  pgPoolSize: 4,
  writeQueueLimit: 10_000,
});

/** Opens the store as the server does, with the registry told of its commits; closed when the file ends. */
async function open(url: string): Promise<{ store: Store; metrics: Metrics }> {
  const metrics = new Metrics();
  const store = await openStore(settings(url), { onCommit: metrics.onCommit });
  after(() => store.close());
  return { store, metrics };
}

describe('commit metrics', () => {
  it('SQLite: writes that arrive together are one committed batch, observed once with its size', async () => {
    const { store, metrics } = await open(`file:${join(tempDir(after), 'plants.db')}`);
    const before = await commits(metrics);
    assert.equal(before.sizes.count, 0);
    // Asked in the same turn of the event loop: the writer thread takes them as one batch.
    await Promise.all(Array.from({ length: 30 }, (_, i) => store.plants.put({ id: i, name: `p${i}` })));
    await store.plants.get(1);
    await store.plants.page({ limit: 10 });
    const { sizes, seconds } = await commits(metrics);
    assert.equal(sizes.count, 1);
    assert.equal(sizes.sum, 30);
    assert.equal(sizes.buckets['16'], 0);
    assert.equal(sizes.buckets['32'], 1);
    assert.equal(seconds.count, 1);
    assert.ok(seconds.sum! > 0 && seconds.sum! < 5, `${seconds.sum} s`);
  });
});

if (skipReason) {
  test('commit metrics on PostgreSQL', { skip: skipReason }, () => {});
} else {
  describe('commit metrics on PostgreSQL', () => {
    it('observes each plant write sent alone as a batch of one; reads are no commits', async () => {
      const { store, metrics } = await open(await server!.createDatabase());
      await store.plants.put({ id: 1, name: 'a' });
      await store.plants.put({ id: 1, name: 'a' }, { createOnly: true }); // exists: a statement all the same
      await store.plants.patch(1, { tag: 'b' });
      await store.plants.delete(1);
      await store.plants.delete(1); // not found: likewise
      await store.plants.get(1);
      await store.plants.page({ limit: 10 });
      await store.plants.count();
      const { sizes, seconds } = await commits(metrics);
      assert.equal(sizes.count, 5);
      assert.equal(sizes.sum, 5);
      assert.equal(sizes.buckets['1'], 5);
      assert.equal(seconds.count, 5);
      assert.ok(seconds.sum! > 0 && seconds.sum! < 5, `${seconds.sum} s`);
    });

    it('observes writes that arrive together as one committed batch (group commit)', async () => {
      const { store, metrics } = await open(await server!.createDatabase());
      await Promise.all(Array.from({ length: 30 }, (_, i) => store.plants.put({ id: i, name: `p${i}` })));
      const { sizes } = await commits(metrics);
      assert.equal(sizes.count, 1);
      assert.equal(sizes.sum, 30);
    });

    it('does not observe a write that failed', async () => {
      const { store, metrics } = await open(await server!.createDatabase());
      await store.plants.put({ id: 1, name: 'a' });
      await store.close();
      await assert.rejects(store.plants.put({ id: 2, name: 'b' }));
      assert.equal((await commits(metrics)).sizes.count, 1);
    });
  });
}
