import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseJson } from '@plant-store/client/json';
import type { StoredPlant } from '../../../src/model/plant.js';
import { SCAN_WINDOW } from '../../../src/store/sqlite/list-sql.js';
import { SqliteStore } from '../../../src/store/sqlite/store.js';
import type { ListOptions, PlantSort } from '../../../src/store/store.js';
import { tempDir, testApp } from '../../helpers.js';

/**
 * A q that no trigram serves (1 or 2 characters) is found by checking names one by one along the order's
 * index: at most SCAN_WINDOW of them per page or export chunk (a window of 40 here), so that a q few names
 * hold never reads every plant in one statement on the event loop. A page whose window ends first is
 * answered short, and the next page goes on after the last plant examined: following the pages finds
 * every plant, once, in order.
 */

const WINDOW = 40;
const PLANTS = 300;
/** The plants whose names hold "zq": few and far apart, so most windows find none. */
const HOLDING = [5, 6, 131, 132, 133, 299];
const nameOf = (id: number) => (HOLDING.includes(id) ? `plant ZQ ${(id * 7919) % 1000}` : `plant ${(id * 7919) % 1000}`);

/** The store, closed when the file ends unless `closedBy` (an app) closes it. */
async function smallWindowStore(closedBy?: 'app'): Promise<SqliteStore> {
  const store = SqliteStore.open(`file:${join(tempDir(after), 'plants.db')}`, { synchronous: 'NORMAL', busyTimeoutMs: 5000, scanWindow: WINDOW });
  if (closedBy === undefined) after(() => store.close());
  const session = await store.plants.startImport();
  await session.add(Array.from({ length: PLANTS }, (_, i) => ({ id: i + 1, name: nameOf(i + 1), tag: i % 2 ? 'odd' : 'even' })));
  await session.commit({ createOnly: false });
  return store;
}

function expectedIds(sort: PlantSort, tags: string[] = []): number[] {
  const found = HOLDING.filter((id) => tags.length === 0 || tags.includes(id % 2 ? 'even' : 'odd'));
  const byName = (a: number, b: number) => (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : a - b);
  if (sort === 'id') return found;
  if (sort === '-id') return [...found].reverse();
  return sort === 'name' ? [...found].sort(byName) : [...found].sort(byName).reverse();
}

describe('SQLite: a scan for q examines at most its window per page', () => {
  it('is 100,000 plants', () => assert.equal(SCAN_WINDOW, 100_000));

  for (const sort of ['id', '-id', 'name', '-name'] as const) {
    for (const tags of [[], ['odd'], ['odd', 'even']]) {
      it(`sort=${sort}, ${tags.length} tags: short pages go on after the last plant examined, and together hold every match once`, async () => {
        const store = await smallWindowStore();
        const pages: number[][] = [];
        let options: ListOptions = { limit: 100, q: 'zq', sort, tags };
        for (;;) {
          const page = await store.plants.page(options);
          pages.push((parseJson(page.json) as StoredPlant[]).map((p) => Number(p.id)));
          if (page.next === undefined) break;
          options = { ...options, after: page.next };
          assert.ok(pages.length <= PLANTS / 10, 'the pages end');
        }
        assert.deepEqual(pages.flat(), expectedIds(sort, tags));
        // Pages of 100 that examined 40 plants each: several pages, most of them short.
        const examined = tags.length === 1 ? PLANTS / 2 : PLANTS;
        assert.ok(pages.length >= Math.floor(examined / WINDOW), `${pages.length} pages`);
        assert.ok(
          pages.some((page) => page.length === 0),
          'a window with no match is an empty page with a next',
        );
      });
    }
  }

  it('exports go on window after window, every match once, in order', async () => {
    const store = await smallWindowStore();
    for (const sort of ['id', 'name', '-name'] as const) {
      const exported: number[] = [];
      for await (const chunk of await store.plants.export({ q: 'zq', sort })) exported.push(...chunk.map((p) => Number(p.id)));
      assert.deepEqual(exported, expectedIds(sort), sort);
    }
  });

  it('over HTTP: a short page carries a Link, and following the Links finds every match', async () => {
    const store = await smallWindowStore('app');
    const t = await testApp(after, { store });
    const found: number[] = [];
    let pages = 0;
    for (let next: string | undefined = '/plants?q=ZQ&sort=name&limit=3'; next !== undefined; pages++) {
      const res = await t.call('GET', next);
      assert.equal(res.statusCode, 200, res.payload);
      found.push(...(parseJson(res.payload) as StoredPlant[]).map((p) => Number(p.id)));
      next = /^<([^>]+)>; rel="next"$/.exec(String(res.headers.link ?? ''))?.[1];
    }
    assert.deepEqual(found, expectedIds('name'));
    assert.ok(pages > HOLDING.length / 3, `${pages} pages`);
  });

  it('GET /events?type= examines at most its window of events per page: short pages with a Link, every event of the type once', async () => {
    const store = await smallWindowStore('app');
    const t = await testApp(after, { store });
    // 300 creations (the import), then a delete here and there among more writes.
    const deleted: string[] = [];
    for (let id = 1; id <= 200; id++) {
      const res = id % 50 === 7 ? await t.call('DELETE', `/plants/${id}`) : await t.call('PATCH', `/plants/${id}`, { body: { tag: 'x' } });
      assert.ok([200, 204].includes(res.statusCode), res.payload);
    }
    const all = (parseJson((await t.call('GET', '/events?limit=1000')).payload) as Array<{ id: string; type: string }>).filter(
      (event) => event.type === 'plant.deleted',
    );
    deleted.push(...all.map((event) => event.id));
    assert.equal(deleted.length, 4);
    const found: string[] = [];
    let pages = 0;
    for (let next: string | undefined = '/events?type=plant.deleted&limit=10'; next !== undefined; pages++) {
      const res = await t.call('GET', next);
      assert.equal(res.statusCode, 200, res.payload);
      found.push(...(parseJson(res.payload) as Array<{ id: string }>).map((event) => event.id));
      next = /^<([^>]+)>; rel="next"$/.exec(String(res.headers.link ?? ''))?.[1];
      assert.ok(pages < 100, 'the pages end');
    }
    assert.deepEqual(found, deleted);
    assert.ok(pages >= Math.floor(500 / WINDOW), `${pages} pages of at most ${WINDOW} events examined each`);
    // Without a type, pages are whole: no window applies.
    const whole = await t.call('GET', '/events?limit=100');
    assert.equal((parseJson(whole.payload) as unknown[]).length, 100);
  });
});
