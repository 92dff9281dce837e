import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { parseJson } from '@plant-store/client/json';
import type { StoredPlant } from '../../src/model/plant.js';
import { MAX_TERMS, searchTerms } from '../../src/store/sqlite/search-terms.js';
import { testApp, type TestApp } from '../helpers.js';

/**
 * Crafted names against search: thousands of names of one repeated letter (`a`×120, `b`, `a`×120) and a
 * long q made of the same letters. Each search looks up a bounded number of trigrams (search-terms.ts:
 * at most MAX_TERMS, of the most distinct characters) and checks every name found against q, so the
 * work of one search is bounded (bench/crafted.ts measures it) and the answers stay exact: checked here
 * over HTTP, pages, counts and exports, in both orders, on both stores. Not timed.
 */

const a = (n: number) => 'a'.repeat(n);
const CRAFTED = 3000;
/** Found in no crafted name (they hold one b), but in one plant made for it. */
const NOWHERE = `${a(49)}b${a(49)}b`;
/** In every crafted name. */
const EVERYWHERE = `${a(60)}b${a(39)}`;

async function all(t: TestApp, url: string): Promise<StoredPlant[]> {
  const found: StoredPlant[] = [];
  for (let next: string | undefined = url; next !== undefined;) {
    const res = await t.call('GET', next);
    assert.equal(res.statusCode, 200, res.payload);
    found.push(...(parseJson(res.payload) as StoredPlant[]));
    next = /^<([^>]+)>; rel="next"$/.exec(String(res.headers.link ?? ''))?.[1];
  }
  return found;
}

describe('crafted names and a long q of their letters', async () => {
  const t = await testApp(after);
  const plants: StoredPlant[] = [
    ...Array.from({ length: CRAFTED }, (_, i) => ({ id: i + 1, name: `${a(120)}b${a(120)}` })),
    { id: 10_001, name: NOWHERE },
    { id: 10_002, name: `zz ${NOWHERE.toUpperCase()} zz` },
    { id: 10_003, name: a(100) },
    { id: 10_004, name: 'Boston Fern' },
  ];
  const session = await t.store.plants.startImport();
  await session.add(plants);
  await session.commit({ createOnly: false });

  it("looks up a bounded number of trigrams for any q (SQLite's trigram index; PostgreSQL's pg_trgm plans its own)", () => {
    for (const q of [NOWHERE, EVERYWHERE, a(100), `${'ab'.repeat(50)}`, 'abcdefghijklmnopqrstuvwxyz'.repeat(3)]) {
      const terms = searchTerms(q);
      assert.ok(terms.length >= 1 && terms.length <= MAX_TERMS, `${terms.length} terms for a q of ${q.length}`);
    }
  });

  for (const [q, ids] of [
    [NOWHERE, [10_001, 10_002]],
    [EVERYWHERE, Array.from({ length: CRAFTED }, (_, i) => i + 1)],
  ] as const) {
    it(`q of ${q.length} characters (${q === NOWHERE ? 'in no crafted name' : 'in every crafted name'}): exact pages, count and export, in both orders`, async () => {
      const byName = [...ids].sort((x, y) => {
        const [nx, ny] = [plants.find((p) => p.id === x)!.name, plants.find((p) => p.id === y)!.name];
        return nx < ny ? -1 : nx > ny ? 1 : x - y;
      });
      assert.deepEqual(
        (await all(t, `/plants?q=${q}&limit=1000`)).map((p) => p.id),
        [...ids],
      );
      assert.deepEqual(
        (await all(t, `/plants?q=${q}&sort=name&limit=1000`)).map((p) => p.id),
        byName,
      );
      assert.deepEqual(
        (await all(t, `/plants?q=${q}&sort=-name&limit=1000`)).map((p) => p.id),
        [...byName].reverse(),
      );
      const counted = await t.call('GET', `/plants?q=${q}&limit=1`, { headers: { prefer: 'count=exact' } });
      assert.equal(counted.headers['x-total-count'], String(ids.length));
      const exported = await t.call('GET', `/plants?q=${q}&sort=name&format=ndjson`);
      assert.deepEqual(
        exported.payload
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => (parseJson(line) as StoredPlant).id),
        byName,
      );
    });
  }
});
