import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseJson } from '@plant-store/client/json';
import { openConnection, prepare } from '../../../src/store/sqlite/connection.js';
import { countSql, filterParams, listParams, rowsSql } from '../../../src/store/sqlite/list-sql.js';
import type { ListOptions } from '../../../src/store/store.js';
import type { StoredPlant } from '../../../src/model/plant.js';
import { openSqlite, tempDir } from '../../helpers.js';
import { sqliteBefore } from '../older-schema.js';

/**
 * Finding plants on SQLite: every shape of request is served by the index it was made for, as EXPLAIN
 * QUERY PLAN shows (no sort of the whole table for a page, the trigram index for q of 3 characters or
 * more), and migration plant_search builds the search for a store that already holds plants.
 */

describe('sqlite search: the index each request is served by', async () => {
  const dir = tempDir(after);
  const store = openSqlite(dir);
  const db = openConnection(join(dir, 'plants.db'), { readonly: true });
  after(async () => {
    db.close();
    await store.close();
  });
  const plan = (sql: string, params: Record<string, unknown>) =>
    (prepare(db, `EXPLAIN QUERY PLAN ${sql}`).all(params) as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
  const pagePlan = (options: Omit<ListOptions, 'limit'>) => {
    const { shape, params } = listParams(options, 101);
    return plan(rowsSql(shape), params);
  };

  // [title, request, plan, whether what matched is sorted (q in a name order only)]
  const cases: Array<[string, Omit<ListOptions, 'limit'>, RegExp, boolean?]> = [
    ['sort=id', {}, /^SCAN p$/],
    ['sort=id after', { after: { id: 5 } }, /^SEARCH p USING INTEGER PRIMARY KEY \(rowid>\?\)$/],
    ['sort=-id after', { sort: '-id', after: { id: 5 } }, /^SEARCH p USING INTEGER PRIMARY KEY \(rowid<\?\)$/],
    ['sort=name', { sort: 'name' }, /^SCAN p USING INDEX plants_name_id$/],
    ['sort=name after', { sort: 'name', after: { id: 5, name: 'M' } }, /^SEARCH p USING INDEX plants_name_id \(\(name,name_fold\)>\(\?,\?\)\)$/],
    ['sort=-name after', { sort: '-name', after: { id: 5, name: 'M' } }, /^SEARCH p USING INDEX plants_name_id \(\(name,name_fold\)<\(\?,\?\)\)$/],
    // Several tags: each tag's range of its index, in the order's order; SQLite stops each at the page's end.
    ['tags, sort=id', { tags: ['a', 'b', 'c'] }, /^SEARCH p USING INDEX plants_tag_id \(tag=\?\)/],
    ['tags, sort=id after', { tags: ['a', 'b'], after: { id: 5 } }, /^SEARCH p USING INDEX plants_tag_id \(tag=\? AND id>\?\)/],
    [
      'tag, sort=name after',
      { tags: ['a'], sort: 'name', after: { id: 5, name: 'M' } },
      /^SEARCH p USING COVERING INDEX plants_tag_name_id \(tag=\? AND \(name,name_fold\)>\(\?,\?\)\)$/,
    ],
    ['tags, sort=-name', { tags: ['a', 'b'], sort: '-name' }, /^SEARCH p USING COVERING INDEX plants_tag_name_id \(tag=\?\)/],
    // q of 3 characters or more: the trigram index, in id order as it stands, seeking the key; merged with
    // the plants written after the index's mark (the RIGHT arm: few, sorted), read by id.
    ['q', { q: 'fern' }, /^SCAN s VIRTUAL TABLE INDEX \d+:M\d* \| .*SEARCH p USING INTEGER PRIMARY KEY \(rowid=\?\)$/],
    [
      'q after, sort=-id',
      { q: 'Fern', sort: '-id', after: { id: 9 } },
      /^SCAN s VIRTUAL TABLE INDEX \d+:M\d*< \| .*SEARCH p USING INTEGER PRIMARY KEY \(rowid=\?\)$/,
    ],
    ['q of 3 astral characters', { q: '𐐀𐐁𐐂' }, /^SCAN s VIRTUAL TABLE INDEX \d+:M/],
    ['q, tags', { q: 'fern', tags: ['a', 'b'] }, /^SCAN s VIRTUAL TABLE INDEX \d+:M\d* \| .*SEARCH p USING INTEGER PRIMARY KEY \(rowid=\?\)$/],
    ['q, sort=name', { q: 'fern', sort: 'name' }, /^SCAN s VIRTUAL TABLE INDEX \d+:M\d* \| .*SEARCH p USING INTEGER PRIMARY KEY \(rowid=\?\)/, true],
    // Shorter: a scan of name_fold along the order's index (read alone in the name orders: it holds
    // name_fold), until the page is full or SCAN_WINDOW plants are examined; the plants that match read by id.
    [
      'q of 2 characters, sort=name',
      { q: 'fe', sort: 'name' },
      /^CO-ROUTINE w \| SCAN p USING COVERING INDEX plants_name_id \| SCAN w \| SEARCH p USING INTEGER PRIMARY KEY \(rowid=\?\)$/,
    ],
    ['q of 1 character, sort=id', { q: 'é' }, /^CO-ROUTINE w \| SCAN p \| SCAN w \| SEARCH p USING INTEGER PRIMARY KEY \(rowid=\?\)$/],
    ['q of 2 characters, tags', { q: 'fe', tags: ['a', 'b'] }, /^CO-ROUTINE w \| SEARCH p USING INDEX plants_tag_id \(tag=\?\)/],
  ];
  for (const [title, options, expected, sorted = false] of cases) {
    it(title, () => {
      let shown = pagePlan(options);
      if (options.q !== undefined && [...options.q].length >= 3) {
        // The index's arm and the arm of the plants not indexed yet, merged in the order.
        const merged = /^MERGE \(UNION ALL\) \| LEFT \| (.*) \| RIGHT \| (.*)$/.exec(shown);
        assert.ok(merged, shown);
        assert.match(merged[2]!, /^SCAN u \| SEARCH p USING INTEGER PRIMARY KEY \(rowid=\?\) \| USE TEMP B-TREE FOR ORDER BY$/);
        assert.match(merged[1]!, /MATERIALIZE unindexed \| SEARCH events USING INTEGER PRIMARY KEY \(rowid>\?\)/);
        shown = merged[1]!;
      }
      assert.match(shown, expected);
      // One tag's range or several merged (IN), never every plant of the selection sorted for a page.
      if (sorted) assert.match(shown, /USE TEMP B-TREE FOR ORDER BY$/);
      else if ((options.tags?.length ?? 0) < 2) assert.doesNotMatch(shown, /TEMP B-TREE FOR ORDER BY/);
    });
  }

  // Nothing written after the index's mark: the index alone, as it stands, each name checked.
  const current: Array<[string, Omit<ListOptions, 'limit'>, RegExp]> = [
    ['q, the index current', { q: 'fern' }, /^SCAN s VIRTUAL TABLE INDEX \d+:M\d* \| SEARCH p USING INTEGER PRIMARY KEY \(rowid=\?\)$/],
    [
      'q after, sort=-id, the index current',
      { q: 'Fern', sort: '-id', after: { id: 9 } },
      /^SCAN s VIRTUAL TABLE INDEX \d+:M\d*< \| SEARCH p USING INTEGER PRIMARY KEY \(rowid=\?\)$/,
    ],
    ['q, sort=name, the index current', { q: 'fern', sort: 'name' }, /^SCAN s .* \| USE TEMP B-TREE FOR ORDER BY$/],
  ];
  for (const [title, options, expected] of current) {
    it(title, () => {
      const { shape, params } = listParams(options, 101, { recent: false });
      assert.equal(shape.q, 'index');
      assert.match(plan(rowsSql(shape), params), expected);
    });
  }

  it('counts q through the trigram index, and tags through their index', () => {
    const count = (filter: Parameters<typeof filterParams>[0]) => {
      const { shape, params } = filterParams(filter);
      return plan(countSql(shape), params);
    };
    // The index's matches (each checked by name) and the plants not indexed yet, counted apart and added.
    for (const filter of [{ q: 'fern' }, { q: 'fern', tags: ['a'] }]) {
      assert.match(
        count(filter),
        /^SCAN CONSTANT ROW \| SCALAR SUBQUERY \d+ \| SCAN s VIRTUAL TABLE INDEX \d+:M.* \| SCAN u \| SEARCH p USING INTEGER PRIMARY KEY/,
      );
    }
    assert.match(count({ tags: ['a', 'b'] }), /USING COVERING INDEX plants_tag_id \(tag=\?\)/);
    const { shape, params } = filterParams({ q: 'fern' }, { recent: false });
    assert.match(plan(countSql(shape), params), /^SCAN s VIRTUAL TABLE INDEX \d+:M\d* \| SEARCH p USING INTEGER PRIMARY KEY \(rowid=\?\)$/);
  });

  it('exports in name order with q walk the name index chunk after chunk', () => {
    const { shape, params } = listParams({ q: 'fern', sort: 'name', after: { id: 1, name: 'M' } }, 1000, { walk: true });
    assert.match(
      plan(rowsSql(shape), params),
      /^CO-ROUTINE w \| SEARCH p USING COVERING INDEX plants_name_id \(\(name,name_fold\)>\(\?,\?\)\) \| SCAN w \| SEARCH p USING INTEGER PRIMARY KEY \(rowid=\?\)$/,
    );
  });
});

describe('sqlite migration plant_search on a store that holds plants', () => {
  it('folds every name, indexes it, and keeps the index with later writes', async () => {
    const dir = tempDir(after);
    const path = join(dir, 'plants.db');
    // A store as the previous release left it: the migrations before plant_search, and some plants.
    const old = openConnection(path);
    sqliteBefore(old, 'plant_search');
    const insert = prepare(old, 'INSERT INTO plants (id, name, tag) VALUES (?, ?, ?)');
    old.transaction(() => {
      for (let id = 1; id <= 3000; id++) insert.run(id, id % 3 ? `Plant ${id}` : `ÉCHEVERIA ${id}`, id % 2 ? 'odd' : null);
    })();
    old.close();

    const store = openSqlite(dir);
    try {
      const names = Array.from({ length: 3000 }, (_, i) => ((i + 1) % 3 ? `Plant ${i + 1}` : `ÉCHEVERIA ${i + 1}`));
      const holding = (text: string) => names.filter((name) => name.includes(text)).length;
      const found = async (options: Omit<ListOptions, 'limit'>) =>
        parseJson((await store.plants.page({ limit: 1000, ...options })).json) as StoredPlant[];
      assert.equal((await found({ q: 'échev' })).length, 1000);
      assert.equal(await store.plants.count({ q: 'écheveria 30' }), holding('ÉCHEVERIA 30'), 'found by the trigram index');
      assert.equal(await store.plants.count({ q: 'é' }), 1000, 'and by the scan');
      assert.deepEqual(
        (await found({ q: 'échev', tags: ['odd'], sort: '-name' })).slice(0, 2).map((p) => p.id),
        [999, 993],
      );
      await store.plants.put({ id: 3, name: 'renamed' });
      assert.equal(await store.plants.count({ q: 'echeveria 3' }), 0, 'e is not é');
      assert.equal(await store.plants.count({ q: 'ÉCHEVERIA 3' }), holding('ÉCHEVERIA 3') - 1);
      const db = openConnection(path, { readonly: true });
      assert.equal(prepare(db, 'SELECT count(*) FROM plants WHERE name_fold IS NULL').pluck().get(), 0);
      db.close();
    } finally {
      await store.close();
    }
  });
});
