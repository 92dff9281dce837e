import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StoredPlant } from '../../src/model/plant.js';
import type { Store } from '../../src/store/store.js';

import { expected, walk } from './search-oracle.js';
import { until } from '../toolkit.js';

/**
 * The search index, on every store: where it follows the writes after they commit (SQLite), a search
 * answers as if it were current all the same. Each check compares what q finds, page after page, and
 * what it counts, with a plain substring test over the plants as they stand.
 */

const WORDS = ['fern', 'palm', 'ivy', 'moss', 'aloe', 'cactus'];
const QUERIES = ['fern', 'FERN', 'palm', 'moss aloe', 'ivy ', 'cactus 1', 'renamed', 'ern', 'nothing'];

async function assertSearches(store: Store, plants: Map<string, StoredPlant>, when: string): Promise<void> {
  const all = [...plants.values()];
  for (const q of QUERIES) {
    for (const sort of ['id', '-name'] as const) {
      const found = (await walk(store, { q, sort }, 50)).flat();
      assert.deepEqual(found, expected(all, { q, sort }), `${when}: q=${q} sort=${sort}`);
    }
    assert.equal(await store.plants.count({ q }), expected(all, { q }).length, `${when}: count q=${q}`);
  }
}

/** `openPair`: two stores on one database, as two instances (or the server and the CLI) hold it. */
export function searchIndexContract(name: string, open: () => Promise<Store>, openPair: () => Promise<[Store, Store]>): void {
  describe(`search index contract: ${name}`, () => {
    it('answers at once through another instance of the same database: creates, renames and deletes made through one, searched through the other', async () => {
      const [writer, reader] = await openPair();
      try {
        const plants = new Map<string, StoredPlant>();
        const created = Array.from({ length: 120 }, (_, i): StoredPlant => ({ id: i + 1, name: `${WORDS[(i * 5) % 6]} ${WORDS[i % 6]} ${i}` }));
        await Promise.all(created.map((plant) => writer.plants.put(plant)));
        for (const plant of created) plants.set(String(plant.id), plant);
        await assertSearches(reader, plants, 'the other instance, after 120 concurrent creates');
        await Promise.all(
          created.map(async (plant) => {
            if (Number(plant.id) % 4 === 0) {
              await writer.plants.delete(plant.id);
              plants.delete(String(plant.id));
            } else if (Number(plant.id) % 3 === 0) {
              const renamed = { id: plant.id, name: `renamed ${plant.name}` };
              await writer.plants.patch(plant.id, { name: renamed.name });
              plants.set(String(plant.id), renamed);
            }
          }),
        );
        await assertSearches(reader, plants, 'the other instance, after concurrent renames and deletes');
      } finally {
        await Promise.all([writer.close(), reader.close()]);
      }
    });

    it('answers every search as if the index were current: at once after concurrent creates, renames and deletes', async () => {
      const store = await open();
      try {
        const plants = new Map<string, StoredPlant>();
        const created = Array.from({ length: 300 }, (_, i): StoredPlant => ({ id: i + 1, name: `${WORDS[i % 6]} ${WORDS[(i * 7) % 6]} ${i}` }));
        await Promise.all(created.map((plant) => store.plants.put(plant)));
        for (const plant of created) plants.set(String(plant.id), plant);
        await assertSearches(store, plants, 'after 300 concurrent creates');

        // Renamed plants are found by their new names only; deleted ones are gone; both at once.
        await Promise.all(
          created
            .filter((plant) => Number(plant.id) % 3 === 0)
            .map(async (plant) => {
              const renamed = { id: plant.id, name: `renamed ${plant.name.toUpperCase()}` };
              await store.plants.patch(plant.id, { name: renamed.name });
              plants.set(String(plant.id), renamed);
            }),
        );
        await Promise.all(
          created
            .filter((plant) => Number(plant.id) % 5 === 0)
            .map(async (plant) => {
              await store.plants.delete(plant.id);
              plants.delete(String(plant.id));
            }),
        );
        await assertSearches(store, plants, 'after concurrent renames and deletes');

        // Once the writes stop, the index catches up with all of them, and the answers stay the same.
        await until(async () => (await store.searchIndex.lag()).events === 0, 'the index catches up', { timeoutMs: 10_000 });
        assert.deepEqual(await store.searchIndex.lag(), { events: 0, ms: 0 });
        await assertSearches(store, plants, 'once the index caught up');
      } finally {
        await store.close();
      }
    });

    it('tells how far the index is behind as a count and an age, never below 0', async () => {
      const store = await open();
      try {
        const before = Date.now();
        for (let id = 1; id <= 20; id++) await store.plants.put({ id, name: `lag ${id}` });
        const lag = await store.searchIndex.lag();
        assert.ok(lag.events >= 0 && lag.events <= 20, JSON.stringify(lag));
        assert.ok(lag.ms >= 0 && lag.ms <= Date.now() - before + 1000, JSON.stringify(lag));
        if (lag.events === 0) assert.equal(lag.ms, 0);
        await until(async () => (await store.searchIndex.lag()).events === 0, 'the index catches up', { timeoutMs: 10_000 });
      } finally {
        await store.close();
      }
    });

    it('rebuilds the index from the plants, answering how many it holds, the searches unchanged', async () => {
      const store = await open();
      try {
        const plants = new Map<string, StoredPlant>();
        for (let id = 1; id <= 40; id++) {
          const plant = { id, name: `${WORDS[id % 6]} rebuilt ${id}` };
          await store.plants.put(plant);
          plants.set(String(id), plant);
        }
        assert.equal(await store.searchIndex.rebuild(), 40);
        await assertSearches(store, plants, 'after a rebuild');
        assert.deepEqual(await store.searchIndex.lag(), { events: 0, ms: 0 });
        assert.equal(await store.searchIndex.rebuild(), 40, 'a second rebuild holds the same');
      } finally {
        await store.close();
      }
    });

    it('answers a long q over names of one repeated letter exactly (a few of its trigrams looked up, every name checked)', async () => {
      const store = await open();
      try {
        const crafted = Array.from({ length: 200 }, (_, i): StoredPlant => ({ id: i + 1, name: `${'a'.repeat(120)}b${'a'.repeat(120)}` }));
        const session = await store.plants.startImport();
        await session.add(crafted);
        await session.add([
          { id: 1000, name: 'a'.repeat(100) },
          { id: 1001, name: `${'a'.repeat(49)}b${'a'.repeat(49)}b` },
        ]);
        await session.commit({ createOnly: false });
        const all = [...crafted, { id: 1000, name: 'a'.repeat(100) }, { id: 1001, name: `${'a'.repeat(49)}b${'a'.repeat(49)}b` }];
        for (const q of [`${'a'.repeat(49)}b${'a'.repeat(49)}b`, `${'a'.repeat(60)}b${'a'.repeat(39)}`, 'a'.repeat(100), 'aab', 'bba']) {
          for (const sort of ['id', 'name'] as const) {
            const found = (await walk(store, { q, sort }, 100)).flat().map((plant) => plant.id);
            assert.deepEqual(
              found,
              expected(all, { q, sort }).map((plant) => plant.id),
              `q of ${q.length} characters, sort=${sort}`,
            );
          }
          assert.equal(await store.plants.count({ q }), expected(all, { q }).length);
        }
      } finally {
        await store.close();
      }
    });
  });
}
