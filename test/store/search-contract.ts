import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseJson } from '@plant-store/client/json';
import { PLANT_SORTS, type Store } from '../../src/store/store.js';
import type { StoredPlant } from '../../src/model/plant.js';
import { LARGE_DATA } from '../tier.js';
import { CATALOGUE, expected, exported, QUERIES, walk, type Filter } from './search-oracle.js';

/**
 * Finding plants, the same on every store: q (a substring under Unicode case folding, through the
 * trigram index from 3 characters and by a scan below), several tags, the four orders, keyset pages for
 * every one of them, counts and exports with the same filters. Results are compared with what a plain
 * JavaScript filter and sort make of the same plants.
 */

export function searchContract(name: string, open: () => Promise<Store>): void {
  describe(`search contract: ${name}`, () => {
    it('finds by q alone, under Unicode case folding, at every length (the index from 3 characters, a scan below)', async () => {
      const store = await open();
      try {
        for (const plant of CATALOGUE) await store.plants.put(plant);
        for (const q of QUERIES) {
          const [page] = await walk(store, { q }, 1000);
          assert.deepEqual(page, expected(CATALOGUE, { q }), `q=${JSON.stringify(q)}`);
          assert.equal(await store.plants.count({ q }), page.length, `count q=${JSON.stringify(q)}`);
        }
        // Spot checks of what the reference says, so that it cannot be wrong in the same way.
        const ids = async (q: string) => (await walk(store, { q }, 1000))[0]!.map((p) => p.id);
        assert.deepEqual(await ids('FERN'), [-(2n ** 63n), -5, 1, 2, 2n ** 63n - 1n]);
        assert.deepEqual(await ids('é'), [7, 8]);
        assert.deepEqual(await ids('STRAẞE'), [9, 10]);
        assert.deepEqual(await ids('𐐨'), [12, 13]);
        assert.deepEqual(await ids('%'), [14]);
        assert.deepEqual(await ids('nothing at all'), []);
      } finally {
        await store.close();
      }
    });

    it('orders by id or name, either way, ties on name broken by id, names by code point', async () => {
      const store = await open();
      try {
        for (const plant of CATALOGUE) await store.plants.put(plant);
        for (const sort of PLANT_SORTS) {
          const [page] = await walk(store, { sort }, 1000);
          assert.deepEqual(page, expected(CATALOGUE, { sort }), `sort=${sort}`);
        }
        const names = (await walk(store, { sort: 'name' }, 1000))[0]!.map((p) => `${p.name}#${p.id}`);
        assert.deepEqual(names.slice(0, 6), [
          'Aloe "vera" 100% _pure_ \\ back#14',
          'BOSTON FERN#-5',
          `Boston Fern#${-(2n ** 63n)}`,
          'Boston Fern#1',
          `Boston Fern#${2n ** 63n - 1n}`,
          'Ficus ﬁcus#23',
        ]);
        // U+E000 sorts before U+1F600 by code point (by UTF-16 units it would come after).
        assert.ok(names.indexOf('\uE000 private use#18') < names.indexOf('😀 smile cactus#19'));
      } finally {
        await store.close();
      }
    });

    it('filters by several tags (any of them, repeats and order not mattering), with q and every order', async () => {
      const store = await open();
      try {
        for (const plant of CATALOGUE) await store.plants.put(plant);
        const filters: Filter[] = [
          { tags: ['fern'] },
          { tags: ['fern', 'succulent'] },
          { tags: ['succulent', 'fern', 'fern'] },
          { tags: [''] },
          { tags: ['none', 'other'] },
          { tags: Array.from({ length: 20 }, (_, i) => (i === 19 ? 'tropical' : `t${i}`)) },
          { tags: ['fern', 'tropical'], q: 'FERN' },
          { tags: ['tropical'], q: 'i' },
          { tags: ['succulent'], q: 'nothing' },
        ];
        for (const filter of filters) {
          for (const sort of PLANT_SORTS) {
            const [page] = await walk(store, { ...filter, sort }, 1000);
            assert.deepEqual(page, expected(CATALOGUE, { ...filter, sort }), `${JSON.stringify(filter)} sort=${sort}`);
          }
          assert.equal(await store.plants.count(filter), expected(CATALOGUE, filter).length, `count ${JSON.stringify(filter)}`);
        }
      } finally {
        await store.close();
      }
    });

    it('pages every filter and order by keyset: each plant once, in order, the last page alone short', async () => {
      const store = await open();
      try {
        for (const plant of CATALOGUE) await store.plants.put(plant);
        for (let id = 100; id < 160; id++)
          await store.plants.put({ id, name: `${['Fern', 'fern', 'Palm'][id % 3]} ${id % 7}`, tag: ['fern', 'tropical', 'x'][id % 4] });
        const all = (await walk(store, {}, 1000))[0]!;
        const filters: Filter[] = [{}, { q: 'fern' }, { q: 'e' }, { tags: ['fern', 'tropical'] }, { q: 'FERN', tags: ['fern', 'x'] }];
        for (const filter of filters) {
          for (const sort of PLANT_SORTS) {
            for (const limit of [1, 3, 7]) {
              const pages = await walk(store, { ...filter, sort }, limit);
              assert.deepEqual(pages.flat(), expected(all, { ...filter, sort }), `${JSON.stringify(filter)} sort=${sort} limit=${limit}`);
            }
          }
        }
      } finally {
        await store.close();
      }
    });

    it('pages a q that thousands of names hold in name order the same (SQLite then walks the name index)', LARGE_DATA, async () => {
      const store = await open();
      try {
        const plants: StoredPlant[] = Array.from({ length: 8000 }, (_, i) => ({
          id: i + 1,
          name: `${['Fern', 'FERN', 'fernleaf', 'Boston fern'][i % 4]} ${(i * 7919) % 1000}`,
          ...(i % 3 ? { tag: i % 3 === 1 ? 'a' : 'b' } : {}),
        }));
        plants.push({ id: 9001, name: 'Palm' });
        const session = await store.plants.startImport();
        await session.add(plants);
        await session.commit({ createOnly: false });
        for (const filter of [
          { q: 'FERN', sort: 'name' },
          { q: 'fern', sort: '-name', tags: ['a', 'b'] },
        ] as const) {
          const pages = await walk(store, filter, 700);
          assert.deepEqual(pages.flat(), expected(plants, filter), JSON.stringify(filter));
        }
      } finally {
        await store.close();
      }
    });

    it('matches a plain substring test on random names and queries (fast-check), through the index and the scan', async () => {
      const store = await open();
      try {
        const unit = fc.constantFrom('a', 'A', 'b', 'é', 'É', 'ß', 'S', 's', 'Σ', 'ς', 'σ', '𐐀', '𐐨', ' ', '"', '%', '_');
        const names = fc.sample(fc.string({ unit, minLength: 1, maxLength: 8 }), { numRuns: 150, seed: 19 });
        const plants: StoredPlant[] = names.map((name, i) => ({ id: i + 1, name, ...(i % 3 === 0 ? {} : { tag: i % 3 === 1 ? 'x' : 'y' }) }));
        const session = await store.plants.startImport();
        await session.add(plants);
        await session.commit({ createOnly: false });
        const queries = fc.sample(fc.string({ unit, minLength: 1, maxLength: 4 }), { numRuns: 60, seed: 7 });
        for (const q of queries) {
          for (const sort of ['id', '-name'] as const) {
            const [page] = await walk(store, { q, sort }, 1000);
            assert.deepEqual(page, expected(plants, { q, sort }), `q=${JSON.stringify(q)} sort=${sort}`);
          }
          const [tagged] = await walk(store, { q, tags: ['x'] }, 1000);
          assert.deepEqual(tagged, expected(plants, { q, tags: ['x'] }), `q=${JSON.stringify(q)} tag=x`);
        }
      } finally {
        await store.close();
      }
    });

    it('keeps every write path searchable: create, replace, patch of name or tag, delete, import', async () => {
      const store = await open();
      try {
        const found = async (q: string, tags?: string[]) => (await walk(store, { q, tags }, 1000))[0]!.map((p) => p.id);
        await store.plants.put({ id: 1, name: 'Golden Pothos' });
        assert.deepEqual(await found('POTHOS'), [1]);
        await store.plants.put({ id: 1, name: 'Silver Philodendron' });
        assert.deepEqual(await found('pothos'), [], 'the old name is gone from the index');
        assert.deepEqual(await found('philo'), [1]);
        await store.plants.patch(1, { name: 'Monstera' });
        assert.deepEqual([await found('philo'), await found('monst')], [[], [1]]);
        await store.plants.patch(1, { tag: 'big' });
        assert.deepEqual(await found('monst', ['big']), [1], 'a patch of the tag alone keeps the name found');
        await store.plants.put({ id: 2, name: 'Monstera adansonii' }, { createOnly: true });
        await store.plants.put({ id: 2, name: 'not stored' }, { createOnly: true });
        assert.deepEqual(await found('monstera'), [1, 2]);
        assert.deepEqual(await found('stored'), []);
        await store.plants.delete(1);
        assert.deepEqual(await found('monstera'), [2]);
        const session = await store.plants.startImport();
        await session.add([
          { id: 2, name: 'Imported Fern' },
          { id: 3, name: 'imported PALM', tag: 't' },
        ]);
        await session.commit({ createOnly: false });
        assert.deepEqual(await found('IMPORTED'), [2, 3]);
        assert.deepEqual(await found('monstera'), []);
        assert.equal(await store.plants.count({ q: 'imported', tags: ['t'] }), 1);
      } finally {
        await store.close();
      }
    });

    it('pages across writes: a plant written ahead of the key appears later, one behind does not, nothing repeats', async () => {
      const store = await open();
      try {
        for (const [id, name] of [
          [10, 'Fern b'],
          [20, 'Fern d'],
          [30, 'Fern f'],
          [40, 'Fern h'],
        ] as const)
          await store.plants.put({ id, name });
        for (const sort of PLANT_SORTS) {
          const first = await store.plants.page({ q: 'fern', sort, limit: 2 });
          const seen = (parseJson(first.json) as StoredPlant[]).map((p) => p.name);
          // One plant behind the key in this order, one ahead of it, and a rename that moves one behind.
          const behind = sort === 'id' || sort === 'name' ? { id: 1, name: 'Fern a' } : { id: 99, name: 'Fern z' };
          const ahead = sort === 'id' || sort === 'name' ? { id: 99, name: 'Fern z' } : { id: 1, name: 'Fern a' };
          await store.plants.put(behind);
          await store.plants.put(ahead);
          let after = first.next;
          for (;;) {
            const page = await store.plants.page({ q: 'fern', sort, limit: 2, after });
            seen.push(...(parseJson(page.json) as StoredPlant[]).map((p) => p.name));
            if (page.next === undefined) break;
            after = page.next;
          }
          assert.ok(seen.includes(ahead.name), `${sort}: ${ahead.name} written ahead of the key appears`);
          assert.ok(!seen.includes(behind.name), `${sort}: ${behind.name} written behind the key does not`);
          assert.equal(new Set(seen).size, seen.length, `${sort}: nothing repeats (${seen.join(', ')})`);
          assert.equal(seen.length, 5);
          await store.plants.delete(1);
          await store.plants.delete(99);
        }
      } finally {
        await store.close();
      }
    });

    it('exports what the filters select, in the order asked for, and counts it', async () => {
      const store = await open();
      try {
        for (const plant of CATALOGUE) await store.plants.put(plant);
        const session = await store.plants.startImport();
        await session.add(
          Array.from({ length: 2600 }, (_, i) => ({ id: 1000 + i, name: `${i % 2 ? 'Fern' : 'Palm'} ${1000 + i}`, tag: i % 5 ? 'bulk' : 'fern' })),
        );
        await session.commit({ createOnly: false });
        const all = await exported(store, {});
        assert.equal(all.length, CATALOGUE.length + 2600);
        const filters: Filter[] = [
          { q: 'fern', sort: 'name' },
          { q: 'fern', tags: ['fern', 'tropical'], sort: '-id' },
          { tags: ['bulk', 'fern'], sort: '-name' },
          { q: 'é', sort: 'id' },
          { q: 'nothing at all' },
        ];
        for (const filter of filters) {
          const snapshot = await store.plants.export(filter);
          assert.equal(await snapshot.count(), expected(all, filter).length, `count ${JSON.stringify(filter)}`);
          const rows: StoredPlant[] = [];
          for await (const chunk of snapshot) rows.push(...chunk);
          assert.deepEqual(rows, expected(all, filter), JSON.stringify(filter));
        }
        // Closed early, an export of a filtered, sorted list gives its connection back.
        for (let i = 0; i < 12; i++) {
          for await (const chunk of await store.plants.export({ q: 'fern', sort: 'name' })) {
            assert.equal(chunk.length, 1000);
            break;
          }
        }
        assert.equal((await exported(store, { q: 'palm 1002' })).length, 1);
      } finally {
        await store.close();
      }
    });
  });
}
