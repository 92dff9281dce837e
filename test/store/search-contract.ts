import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseJson } from '@plant-store/client/json';
import { PLANT_SORTS, type ListOptions, type PageKey, type PlantSort, type Store } from '../../src/store/store.js';
import type { StoredPlant } from '../../src/model/plant.js';
import { LARGE_DATA } from '../tier.js';

/**
 * Finding plants, the same on every store: q (a substring under Unicode case folding, through the
 * trigram index from 3 characters and by a scan below), several tags, the four orders, keyset pages for
 * every one of them, counts and exports with the same filters. Results are compared with what a plain
 * JavaScript filter and sort make of the same plants.
 */

type Filter = Pick<ListOptions, 'q' | 'tags' | 'sort'>;

/** By code point, then by id: the order the stores give (SQLite BINARY, PostgreSQL COLLATE "C"). */
function compare(sort: PlantSort): (a: StoredPlant, b: StoredPlant) => number {
  const byId = (a: StoredPlant, b: StoredPlant) => (BigInt(a.id) < BigInt(b.id) ? -1 : BigInt(a.id) > BigInt(b.id) ? 1 : 0);
  const byName = (a: StoredPlant, b: StoredPlant) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)) || byId(a, b);
  const ascending = sort === 'id' || sort === '-id' ? byId : byName;
  return sort.startsWith('-') ? (a, b) => ascending(b, a) : ascending;
}

/**
 * Unicode's full case folding (CaseFolding.txt, statuses C and F) of the characters these tests use, copied
 * from the table rather than computed by the product's foldCase, so that the expectations never share its
 * mistakes. ASCII letters fold to lower case; the characters listed fold as given (a lower-case letter, an
 * emoji or a private-use character to itself); any other fails the test until it is added from the table.
 */
const FOLDS: Readonly<Record<string, string>> = {
  É: 'é',
  é: 'é',
  ß: 'ss',
  ẞ: 'ss',
  ı: 'ı',
  Δ: 'δ',
  δ: 'δ',
  Ο: 'ο',
  ο: 'ο',
  ό: 'ό',
  Σ: 'σ',
  σ: 'σ',
  ς: 'σ',
  τ: 'τ',
  υ: 'υ',
  φ: 'φ',
  ﬁ: 'fi',
  '𐐀': '𐐨',
  '𐐁': '𐐩',
  '𐐨': '𐐨',
  '𐐩': '𐐩',
  '😀': '😀',
  '\uE000': '\uE000',
};

function fold(text: string): string {
  let folded = '';
  for (const char of text) {
    if (char <= '\x7f') folded += char.toLowerCase();
    else if (Object.hasOwn(FOLDS, char)) folded += FOLDS[char];
    else assert.fail(`the search tests' fold has no U+${char.codePointAt(0)!.toString(16).toUpperCase()}: add it from Unicode's CaseFolding.txt`);
  }
  return folded;
}

/** What the filter selects, in its order, as the stores should answer. */
export function expected(plants: readonly StoredPlant[], { q, tags, sort = 'id' }: Filter): StoredPlant[] {
  const folded = q === undefined ? undefined : fold(q);
  return plants
    .filter((p) => (folded === undefined || fold(p.name).includes(folded)) && (!tags?.length || (p.tag !== undefined && tags.includes(p.tag))))
    .sort(compare(sort));
}

/** Every page of a list, `limit` at a time, following each page's next key. */
export async function walk(store: Store, filter: Filter, limit: number): Promise<StoredPlant[][]> {
  const pages: StoredPlant[][] = [];
  let after: PageKey | undefined;
  for (;;) {
    const page = await store.plants.page({ ...filter, limit, after });
    const plants = parseJson(page.json) as StoredPlant[];
    assert.equal(page.count, plants.length);
    pages.push(plants);
    if (page.next === undefined) return pages;
    assert.equal(plants.length, limit, 'only the last page is short');
    const last = plants.at(-1)!;
    assert.deepEqual(page.next, { id: last.id, name: last.name }, 'next is the key of the last plant');
    after = page.next;
    assert.ok(pages.length <= 10_000, 'paging does not end');
  }
}

async function exported(store: Store, filter: Filter): Promise<StoredPlant[]> {
  const snapshot = await store.plants.export(filter);
  const all: StoredPlant[] = [];
  for await (const chunk of snapshot) all.push(...chunk);
  return all;
}

/** Plants whose names exercise folding, ties and the order by code point. */
export const CATALOGUE: StoredPlant[] = [
  { id: 1, name: 'Boston Fern', tag: 'fern' },
  { id: 2, name: 'boston fern', tag: 'fern' },
  { id: -5, name: 'BOSTON FERN', tag: 'tropical' },
  { id: 2n ** 63n - 1n, name: 'Boston Fern', tag: 'fern' },
  { id: -(2n ** 63n), name: 'Boston Fern' },
  { id: 7, name: 'Échevéria élégante', tag: 'succulent' },
  { id: 8, name: 'ÉCHEVÉRIA ÉLÉGANTE', tag: 'succulent' },
  { id: 9, name: 'Straße-Farn', tag: '' },
  { id: 10, name: 'STRASSE', tag: 'tropical' },
  { id: 11, name: 'ΟΔΟΣ φυτό', tag: 'tropical' },
  { id: 12, name: '𐐀𐐁 Deseret ivy', tag: 'tropical' },
  { id: 13, name: '𐐨𐐩 deseret IVY' },
  { id: 14, name: 'Aloe "vera" 100% _pure_ \\ back', tag: 'succulent' },
  { id: 15, name: 'aloe', tag: 'succulent' },
  { id: 16, name: 'Zebra', tag: 'tropical' },
  { id: 17, name: 'zebra', tag: 'tropical' },
  { id: 18, name: '\uE000 private use', tag: 'fern' },
  { id: 19, name: '😀 smile cactus', tag: 'succulent' },
  { id: 20, name: 'ıIi dotless', tag: 'fern' },
  { id: 21, name: 'a', tag: 'fern' },
  { id: 22, name: 'ab', tag: 'fern' },
  { id: 23, name: 'Ficus ﬁcus', tag: 'tropical' },
];

const QUERIES = [
  'fern',
  'FERN',
  'Fern',
  'boston f',
  'é',
  'É',
  'échevéria',
  'ÉLÉGANTE',
  'strasse',
  'STRAẞE',
  'ß',
  'ss',
  'οδοσ',
  'ΟΔΟς',
  '𐐨',
  '𐐀𐐁',
  '𐐨𐐩 d',
  '"vera"',
  '"',
  '100%',
  '%',
  '_pure_',
  '_',
  '\\',
  ' \\ ',
  'a',
  'ab',
  'abc',
  'ı',
  'i',
  'I',
  'ficus',
  '😀',
  '😀 s',
  '\uE000',
  'nothing at all',
  ' ',
];

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
