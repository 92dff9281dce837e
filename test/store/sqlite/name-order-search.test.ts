import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseJson } from '@plant-store/client/json';
import type { StoredPlant } from '../../../src/model/plant.js';
import { openConnection, prepare } from '../../../src/store/sqlite/connection.js';
import { LARGE_DATA } from '../../tier.js';
import { listParams, SCAN_WINDOW } from '../../../src/store/sqlite/list-sql.js';
import { COMMON_Q, MATCH_IDS_SQL, pageOfMatchesSql } from '../../../src/store/sqlite/name-order-q.js';
import { searchWalk } from '../../../src/store/search-walk.js';
import { SqliteStore } from '../../../src/store/sqlite/store.js';
import type { ListOptions } from '../../../src/store/store.js';
import { tempDir } from '../../helpers.js';
import { until } from '../../toolkit.js';

/**
 * q in a name order with the index holding every plant: one pass over the index's candidates finds the
 * matches (MATCH_IDS_SQL) and the page is made from them, or, with COMMON_Q matches or more, found by
 * walking the name index. Either way the pages are exactly those of the whole selection sorted.
 */

const MAX = 9223372036854775807n;
const MIN = -9223372036854775808n;

describe('sqlite: q in a name order, with the search index current', () => {
  const dir = tempDir(after);
  const path = join(dir, 'plants.db');
  const store = SqliteStore.open(`file:${path}`, { synchronous: 'NORMAL', busyTimeoutMs: 5000 });
  /** What the store holds: [id, name, tag]. */
  const plants: Array<[bigint, string, string | undefined]> = [];

  before(async () => {
    const session = await store.plants.startImport();
    const rows: StoredPlant[] = [];
    // Names whose trigrams ("fer", "ern") every one holds, but q ("fern g") only some.
    for (let i = 1; i <= 600; i++) {
      const name = `Fern ${i % 3 === 0 ? 'green' : 'brown'} ${String(i % 97).padStart(2, '0')}`;
      const tag = i % 2 === 0 ? 'shade' : undefined;
      rows.push(tag === undefined ? { id: i, name } : { id: i, name, tag });
      plants.push([BigInt(i), name, tag]);
    }
    // The int64 ends, exact in the ids the page is made from.
    for (const [id, name] of [
      [MAX, 'fern green 00'],
      [MIN, 'FERN GREEN 00'],
    ] as const) {
      rows.push(parseJson(`{"id":${id},"name":"${name}"}`) as StoredPlant);
      plants.push([id, name, undefined]);
    }
    await session.add(rows);
    await session.commit({ createOnly: false });
    await until(async () => (await store.searchIndex.lag()).events === 0, 'the index catches up', { timeoutMs: 10_000 });
  });
  after(() => store.close());

  const expected = (q: string, sort: 'name' | '-name', tag?: string) => {
    const holding = plants.filter(([, name, t]) => name.toLowerCase().includes(q) && (tag === undefined || t === tag));
    // ASCII names: JavaScript's order is SQLite's (BINARY), and name_fold breaks ties by case as the store does.
    holding.sort(([a, an], [b, bn]) => (an < bn ? -1 : an > bn ? 1 : a < b ? -1 : a > b ? 1 : 0));
    if (sort === '-name') holding.reverse();
    return holding.map(([id]) => String(id));
  };

  /** Every page of the request, following the next key, as the ids in order. */
  const allPages = async (options: Omit<ListOptions, 'limit' | 'after'>, limit: number) => {
    const ids: string[] = [];
    let after: ListOptions['after'];
    for (let pages = 0; pages < 100; pages++) {
      const page = await store.plants.page({ ...options, limit, ...(after ? { after } : {}) });
      const rows = parseJson(page.json) as Array<{ id: number | bigint }>;
      ids.push(...rows.map((row) => String(row.id)));
      if (!page.next) return ids;
      after = page.next;
    }
    throw new Error('more than 100 pages');
  };

  for (const sort of ['name', '-name'] as const) {
    it(`sort=${sort}: every page, in order, exact ids at both ends of int64`, async () => {
      const want = expected('fern green', sort);
      assert.ok(want.includes(String(MAX)) && want.includes(String(MIN)));
      assert.deepEqual(await allPages({ q: 'fern green', sort }, 37), want);
    });

    it(`sort=${sort} with a tag: only the tag's matches, in order`, async () => {
      assert.deepEqual(await allPages({ q: 'green 1', sort, tags: ['shade'] }, 5), expected('green 1', sort, 'shade'));
    });
  }

  it('a q whose trigrams every name holds but no name holds whole: an empty page, no next', async () => {
    const page = await store.plants.page({ q: 'fern greenbrown', sort: 'name', limit: 10 });
    assert.equal(page.json, '[]');
    assert.equal(page.next, undefined);
  });

  it('finds the matches in one statement, which says how many and which, and the page reads only those ids', () => {
    const db = openConnection(path, { readonly: true });
    try {
      const { shape, params } = listParams({ q: 'fern green', sort: 'name', tags: ['shade'], after: { id: 5, name: 'Fern' } }, 11, { recent: false });
      assert.equal(shape.q, 'index');
      const found = prepare(db, MATCH_IDS_SQL).get({ ...params, cap: COMMON_Q }) as { count: number; ids: string };
      assert.equal(found.count, expected('fern green', 'name').length);
      assert.equal(
        found.ids,
        `[${[...plants.filter(([, n]) => n.toLowerCase().includes('fern green')).map(([id]) => id)].sort((a, b) => (a < b ? -1 : 1)).join(',')}]`,
      );
      const plan = (prepare(db, `EXPLAIN QUERY PLAN ${pageOfMatchesSql(shape)}`).all({ ...params, ids: found.ids }) as Array<{ detail: string }>)
        .map((r) => r.detail)
        .join(' | ');
      assert.match(plan, /^SCAN j VIRTUAL TABLE INDEX \d+: \| SEARCH p USING INTEGER PRIMARY KEY \(rowid=\?\) \| USE TEMP B-TREE FOR ORDER BY$/);
    } finally {
      db.close();
    }
  });
});

describe('sqlite: q in a name order that COMMON_Q names or more hold', () => {
  it('is found along the name index, page after page, exactly', async () => {
    const dir = tempDir(after);
    const store = SqliteStore.open(`file:${join(dir, 'plants.db')}`, { synchronous: 'NORMAL', busyTimeoutMs: 5000 });
    try {
      const session = await store.plants.startImport();
      const count = COMMON_Q + 300;
      await session.add(Array.from({ length: count }, (_, i) => ({ id: i + 1, name: `Ivy ${String((i * 7919) % count).padStart(5, '0')}` })));
      await session.commit({ createOnly: false });
      await until(async () => (await store.searchIndex.lag()).events === 0, 'the index catches up', { timeoutMs: 10_000 });
      const first = await store.plants.page({ q: 'ivy', sort: 'name', limit: 3 });
      assert.deepEqual(
        (parseJson(first.json) as StoredPlant[]).map((p) => p.name),
        ['Ivy 00000', 'Ivy 00001', 'Ivy 00002'],
      );
      const last = await store.plants.page({ q: 'ivy', sort: '-name', limit: 2 });
      assert.deepEqual(
        (parseJson(last.json) as StoredPlant[]).map((p) => p.name),
        [`Ivy ${String(count - 1).padStart(5, '0')}`, `Ivy ${String(count - 2).padStart(5, '0')}`],
      );
    } finally {
      await store.close();
    }
  });
});

describe('sqlite: q in a name order that names starting alike hold, far along the order', () => {
  it('answers a full first page, the matches sorted, however many names stand before them', LARGE_DATA, async () => {
    const dir = tempDir(after);
    const store = SqliteStore.open(`file:${join(dir, 'plants.db')}`, { synchronous: 'NORMAL', busyTimeoutMs: 5000 });
    try {
      // More names than a walk examines before the matches, then matches enough to have been walked for
      // (up to 5,000 were sorted before, more walked), all together in name order, as "Red …" names stand.
      const before = SCAN_WINDOW + 1000;
      const matches = 6000;
      const session = await store.plants.startImport();
      await session.add(Array.from({ length: before }, (_, i) => ({ id: i + 1, name: `Alba ${String(i).padStart(6, '0')}` })));
      await session.add(Array.from({ length: matches }, (_, i) => ({ id: before + i + 1, name: `Red ${String(i).padStart(5, '0')}` })));
      await session.commit({ createOnly: false });
      await until(async () => (await store.searchIndex.lag()).events === 0, 'the index catches up', { timeoutMs: 30_000 });
      const first = await store.plants.page({ q: 'red', sort: 'name', limit: 3 });
      assert.deepEqual(
        (parseJson(first.json) as StoredPlant[]).map((p) => p.name),
        ['Red 00000', 'Red 00001', 'Red 00002'],
      );
      assert.ok(first.next !== undefined, 'more pages follow');
    } finally {
      await store.close();
    }
  });
});

describe('sqlite: q in a name order walks the start of the order first', () => {
  it('answers a page the walk fills from the plants alone, and one it does not through the index', async () => {
    const dir = tempDir(after);
    const path = join(dir, 'plants.db');
    const store = SqliteStore.open(`file:${path}`, { synchronous: 'NORMAL', busyTimeoutMs: 5000 });
    try {
      // More names than a page of 2 walks (searchWalk(3)), then a block of matches.
      const before = searchWalk(3) + 10;
      const session = await store.plants.startImport();
      await session.add(Array.from({ length: before }, (_, i) => ({ id: i + 1, name: `Alba ${String(i).padStart(4, '0')}` })));
      await session.add(Array.from({ length: 20 }, (_, i) => ({ id: before + i + 1, name: `Fern ${String(i).padStart(2, '0')}` })));
      await session.commit({ createOnly: false });
      await until(async () => (await store.searchIndex.lag()).events === 0, 'the index catches up', { timeoutMs: 10_000 });
      // The index emptied behind the store's back (its mark still says it holds every plant): what it
      // finds is nothing, what the walk finds is every match.
      const db = openConnection(path);
      prepare(db, 'DELETE FROM plants_search').run();
      db.close();
      const names = async (options: Omit<ListOptions, 'limit'>) =>
        (parseJson((await store.plants.page({ q: 'fern', limit: 2, ...options })).json) as StoredPlant[]).map((p) => p.name);
      assert.deepEqual(await names({ sort: 'name', after: { id: before + 3, name: 'Fern 02' } }), ['Fern 03', 'Fern 04'], 'walked');
      assert.deepEqual(await names({ sort: '-name' }), ['Fern 19', 'Fern 18'], 'walked from the end');
      assert.deepEqual(await names({ sort: 'name' }), [], 'past the walk: through the index');
      assert.deepEqual(await names({ sort: 'name', after: { id: before + 19, name: 'Fern 18' } }), [], 'the walk holds one match, not two');
    } finally {
      await store.close();
    }
  });
});
