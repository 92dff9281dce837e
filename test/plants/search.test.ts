import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { parse as parseCsv } from 'csv-parse/sync';
import { parseJson } from '@plant-store/client/json';
import type { StoredPlant } from '../../src/model/plant.js';
import { CATALOGUE, expected } from '../store/search-oracle.js';
import { assertError, testApp } from '../helpers.js';
import { cursorOf, ids, page, params, seed, walk } from './search-pages.js';

/**
 * GET /plants?q=&tag=&sort=&cursor= over HTTP: the parameters alone and together, the cursor in the Link
 * header and its rules, counts and exports with the filters. (Bad values, refused naming their parameter,
 * are in search-parameters.test.ts; the store contract, test/store/search-contract.ts, checks the results in depth.)
 */

describe('GET /plants: finding plants', async () => {
  const t = await testApp(after);
  await seed(t, CATALOGUE);

  it('q finds names holding the text under Unicode case folding, alone and with other filters', async () => {
    const cases: Array<[string, Partial<{ q: string; tags: string[] }>]> = [
      ['q=FERN', { q: 'FERN' }],
      ['q=fern', { q: 'fern' }],
      ['q=%C3%A9', { q: 'é' }],
      [`q=${encodeURIComponent('ÉLÉGANTE')}`, { q: 'ÉLÉGANTE' }],
      [`q=${encodeURIComponent('straße')}`, { q: 'straße' }],
      [`q=${encodeURIComponent('𐐨𐐩')}`, { q: '𐐨𐐩' }],
      ['q=a', { q: 'a' }],
      ['q=100%25', { q: '100%' }],
      ['q=%22vera%22', { q: '"vera"' }],
      ['q=fern&tag=tropical', { q: 'fern', tags: ['tropical'] }],
      ['q=fern&tag=tropical&tag=fern', { q: 'fern', tags: ['tropical', 'fern'] }],
      ['tag=succulent&tag=fern', { tags: ['succulent', 'fern'] }],
      ['tag=', { tags: [''] }],
      ['q=no%20such%20plant', { q: 'no such plant' }],
    ];
    for (const [query, filter] of cases) {
      const { pages } = await walk(t, `/plants?${query}`);
      assert.deepEqual(pages.flat(), expected(CATALOGUE, filter), query);
    }
    assert.deepEqual(ids((await page(t, '/plants?q=FERN')).plants), [-(2n ** 63n), -5, 1, 2, 2n ** 63n - 1n]);
    assert.deepEqual(ids((await page(t, '/plants?q=%C3%A9')).plants), [7, 8], 'é finds É');
    assert.deepEqual(ids((await page(t, `/plants?q=${encodeURIComponent('𐐀')}`)).plants), [12, 13], 'outside the BMP too');
  });

  it('an empty result is [] without a Link, and counts 0', async () => {
    const res = await t.call('GET', '/plants?q=zzzz&tag=fern', { headers: { prefer: 'count=exact' } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.payload, '[]');
    assert.equal(res.headers.link, undefined);
    assert.equal(res.headers['x-total-count'], '0');
  });

  it('sort=id|-id|name|-name, ties on name broken by id', async () => {
    for (const sort of ['id', '-id', 'name', '-name'] as const) {
      const { pages } = await walk(t, `/plants?sort=${sort}&limit=4`);
      assert.deepEqual(pages.flat(), expected(CATALOGUE, { sort }), sort);
    }
    const fern = (await page(t, '/plants?sort=name&q=boston%20fern')).plants;
    assert.deepEqual(
      fern.map((p) => `${p.name}/${p.id}`),
      ['BOSTON FERN/-5', `Boston Fern/${-(2n ** 63n)}`, 'Boston Fern/1', `Boston Fern/${2n ** 63n - 1n}`, 'boston fern/2'],
    );
    const reversed = (await page(t, '/plants?sort=-name&q=boston%20fern')).plants;
    assert.deepEqual(reversed, [...fern].reverse());
  });

  it('pages by cursor for every order and filter: the Link keeps q, every tag, sort and limit, and drops after', async () => {
    const { pages, links } = await walk(t, '/plants?q=e&tag=fern&tag=tropical&tag=succulent&sort=-name&limit=2');
    assert.deepEqual(pages.flat(), expected(CATALOGUE, { q: 'e', tags: ['fern', 'tropical', 'succulent'], sort: '-name' }));
    assert.ok(links.length >= 3);
    for (const link of links) {
      const p = params(link);
      assert.equal(p.get('q'), 'e');
      assert.deepEqual(p.getAll('tag'), ['fern', 'tropical', 'succulent']);
      assert.equal(p.get('sort'), '-name');
      assert.equal(p.get('limit'), '2');
      assert.match(p.get('cursor') ?? '', /^[A-Za-z0-9_-]+$/);
    }
    // A first page asked with after (sort=id): its Link carries a cursor instead.
    const { next } = await page(t, '/plants?after=5&limit=2');
    assert.equal(params(next!).get('after'), null);
    assert.deepEqual(ids((await page(t, next!)).plants), [9, 10]);
  });

  it('a cursor may be used with another limit, and with the same filters written otherwise (case of q, order and repeats of tags)', async () => {
    const cursor = await cursorOf(t, '/plants?q=fern&tag=fern&tag=tropical&sort=name&limit=2');
    const rest = expected(CATALOGUE, { q: 'fern', tags: ['fern', 'tropical'], sort: 'name' }).slice(2);
    for (const query of ['q=fern&tag=fern&tag=tropical', 'q=FERN&tag=tropical&tag=fern&tag=fern']) {
      const { pages } = await walk(t, `/plants?${query}&sort=name&limit=1&cursor=${cursor}`);
      assert.deepEqual(pages.flat(), rest, query);
    }
  });

  it('refuses a cursor made for other filters or another order: 400 naming cursor', async () => {
    const cursor = await cursorOf(t, '/plants?q=fern&tag=fern&sort=name&limit=1');
    for (const query of [
      'q=fern&tag=fern',
      'q=fern&sort=name',
      'tag=fern&sort=name',
      'q=fer&tag=fern&sort=name',
      'q=fern&tag=fern&tag=x&sort=name',
      'q=fern&tag=fern&sort=-name',
    ]) {
      assertError(await t.call('GET', `/plants?${query}&cursor=${cursor}`), 400, 'querystring.cursor');
    }
    const byId = await cursorOf(t, '/plants?limit=1');
    assertError(await t.call('GET', `/plants?sort=name&cursor=${byId}`), 400, 'querystring.cursor');
    assertError(await t.call('GET', `/plants?sort=-id&cursor=${byId}`), 400, 'querystring.cursor');
    assertError(await t.call('GET', `/plants?tag=fern&cursor=${byId}`), 400, 'querystring.cursor');
  });

  it('refuses cursor with after, and after with any order but id: 400 naming them', async () => {
    const cursor = await cursorOf(t, '/plants?limit=1');
    assertError(await t.call('GET', `/plants?after=1&cursor=${cursor}`), 400, 'querystring.cursor');
    for (const sort of ['name', '-name', '-id']) assertError(await t.call('GET', `/plants?sort=${sort}&after=1`), 400, 'querystring.after');
    assert.deepEqual(ids((await page(t, '/plants?sort=id&after=20&q=a')).plants), [21, 22], 'after with sort=id and filters');
  });

  it('cursors across writes: a plant written ahead of the cursor appears on a later page, one behind it does not, nothing repeats', async () => {
    const own = await testApp(after);
    await seed(
      own,
      [10, 20, 30, 40, 50].map((id) => ({ id, name: `Palm ${String.fromCharCode(96 + id / 10)}`, tag: 'p' })),
    );
    for (const sort of ['name', '-id'] as const) {
      const first = await page(own, `/plants?q=palm&tag=p&sort=${sort}&limit=2`);
      const behind = sort === 'name' ? { id: 5, name: 'PALM A', tag: 'p' } : { id: 60, name: 'Palm z', tag: 'p' };
      const ahead = sort === 'name' ? { id: 6, name: 'palm z', tag: 'p' } : { id: 1, name: 'Palm 0', tag: 'p' };
      for (const plant of [behind, ahead]) assert.equal((await own.call('POST', '/plants', { body: plant })).statusCode, 200);
      const { pages } = await walk(own, first.next!);
      const seen = [...first.plants, ...pages.flat()].map((p) => p.id);
      assert.ok(seen.includes(ahead.id), `${sort}: the plant ahead appears`);
      assert.ok(!seen.includes(behind.id), `${sort}: the plant behind does not`);
      assert.equal(new Set(seen).size, seen.length, `${sort}: nothing repeats`);
      assert.equal(seen.length, 6);
      for (const plant of [behind, ahead]) assert.equal((await own.call('DELETE', `/plants/${plant.id}`)).statusCode, 204);
    }
  });

  it('Prefer: count=exact counts what q and tag select, on every page', async () => {
    const filter = { q: 'ern', tags: ['fern', 'tropical'] };
    const { next } = await page(t, '/plants?q=ern&tag=fern&tag=tropical&limit=1');
    for (const url of ['/plants?q=ern&tag=fern&tag=tropical&limit=1', next!]) {
      const res = await t.call('GET', url, { headers: { prefer: 'count=exact' } });
      assert.equal(res.headers['x-total-count'], String(expected(CATALOGUE, filter).length));
      assert.equal(res.headers['preference-applied'], 'count=exact');
    }
  });

  it('Prefer: count=exact is not applied to a q of 1 or 2 characters (folded), whose count would read every plant', async () => {
    for (const q of ['e', 'ab', 'ß', '%C3%A9']) {
      for (const format of ['', '&format=ndjson']) {
        const res = await t.call('GET', `/plants?q=${q}${format}`, { headers: { prefer: 'count=exact' } });
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers['x-total-count'], undefined, `q=${q}${format}`);
        assert.equal(res.headers['preference-applied'], undefined, `q=${q}${format}`);
      }
    }
    // ß folds to ss (2 characters); ßa to ssa, 3: counted.
    const counted = await t.call('GET', '/plants?q=%C3%9Fa', { headers: { prefer: 'count=exact' } });
    assert.equal(counted.headers['preference-applied'], 'count=exact');
  });

  it('NDJSON and CSV exports apply q, tag and sort (limit and cursor do not page them), counted alike', async () => {
    const filter = { q: 'ern', tags: ['fern', 'succulent'], sort: '-name' as const };
    const want = expected(CATALOGUE, filter);
    const cursor = await cursorOf(t, '/plants?q=ern&tag=fern&tag=succulent&sort=-name&limit=1');
    const query = `q=ern&tag=fern&tag=succulent&sort=-name&limit=1&cursor=${cursor}`;
    const nd = await t.call('GET', `/plants?${query}`, { headers: { accept: 'application/x-ndjson', prefer: 'count=exact' } });
    assert.equal(nd.statusCode, 200);
    assert.equal(nd.headers['x-total-count'], String(want.length));
    const lines = nd.payload.split('\n').filter((line) => line !== '');
    assert.deepEqual(
      lines.map((line) => parseJson(line) as StoredPlant),
      want,
    );
    const csv = await t.call('GET', `/plants?${query}&format=csv`);
    const rows = parseCsv<{ id: string; name: string; tag: string }>(csv.payload, { columns: true });
    assert.deepEqual(
      rows.map((r) => r.id),
      want.map((p) => String(p.id)),
    );
    // Not applied, but checked as on every list: one the service did not make, or made for other filters, is 400.
    assertError(await t.call('GET', '/plants?format=csv&cursor=bm90LW1hZGUtaGVyZQ'), 400, 'querystring.cursor', 'invalid_cursor');
    assertError(await t.call('GET', `/plants?q=other&format=ndjson&cursor=${cursor}`), 400, 'querystring.cursor', 'invalid_cursor');
    const none = await t.call('GET', '/plants?q=zzzz&format=ndjson', { headers: { prefer: 'count=exact' } });
    assert.equal(none.payload, '');
    assert.equal(none.headers['x-total-count'], '0');
  });
});
