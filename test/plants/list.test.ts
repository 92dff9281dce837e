import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertError, testApp, type TestApp } from '../helpers.js';
import { nextLink } from '../toolkit.js';

/** Creates plants (concurrently, a few at a time) with these ids, names "p<id>", and a tag on the even ones. */
async function seed(t: TestApp, ids: readonly bigint[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 25) {
    const batch = ids.slice(i, i + 25).map(async (id) => {
      const tag = id % 2n === 0n ? ',"tag":"even"' : '';
      const res = await t.call('POST', '/plants', { body: `{"id":${id},"name":"p${id}"${tag}}` });
      assert.equal(res.statusCode, 200, res.payload);
    });
    await Promise.all(batch);
  }
}

/** Follows the Link headers from `url` to the end; every page's raw text and the ids on it, exactly. */
async function walk(t: TestApp, url: string): Promise<{ pages: string[][]; links: string[] }> {
  const pages: string[][] = [];
  const links: string[] = [];
  let next: string | undefined = url;
  while (next !== undefined) {
    const res = await t.call('GET', next);
    assert.equal(res.statusCode, 200, res.payload);
    // The ids as written, digits and all: JSON.parse would round the big ones.
    pages.push([...res.payload.matchAll(/"id":(-?\d+)/g)].map((m) => m[1]!));
    next = nextLink(res.headers.link);
    if (next !== undefined) links.push(next);
    assert.ok(pages.length < 1000, 'paging does not end');
  }
  return { pages, links };
}

describe('GET /plants', () => {
  it('answers {id, name, tag?} in ascending id order, tag left out when absent', async () => {
    const t = await testApp(after);
    await seed(t, [5n, -3n, 2n ** 60n, 0n, 17n]);
    const res = await t.call('GET', '/plants');
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json\b/);
    assert.equal(res.headers.link, undefined);
    assert.equal(
      res.payload,
      '[{"id":-3,"name":"p-3"},{"id":0,"name":"p0","tag":"even"},{"id":5,"name":"p5"},{"id":17,"name":"p17"},' +
        `{"id":${2n ** 60n},"name":"p${2n ** 60n}","tag":"even"}]`,
    );
  });

  it('answers an empty array when there are no plants', async () => {
    const t = await testApp(after);
    const res = await t.call('GET', '/plants');
    assert.equal(res.statusCode, 200);
    assert.equal(res.payload, '[]');
    assert.equal(res.headers.link, undefined);
  });

  it('gives 100 plants by default, and up to 1000 when asked', async () => {
    const t = await testApp(after);
    await seed(
      t,
      Array.from({ length: 120 }, (_, i) => BigInt(i + 1)),
    );
    const first = await t.call('GET', '/plants');
    assert.equal(first.json<unknown[]>().length, 100);
    const link = nextLink(first.headers.link);
    assert.match(link ?? '', /^\/plants\?cursor=[A-Za-z0-9_-]+$/);
    const second = await t.call('GET', link!);
    assert.deepEqual(
      second.json<Array<{ id: number }>>().map((p) => p.id),
      Array.from({ length: 20 }, (_, i) => 101 + i),
    );
    assert.equal(second.headers.link, undefined);
    const all = await t.call('GET', '/plants?limit=1000');
    assert.equal(all.json<unknown[]>().length, 120);
    assert.equal(all.headers.link, undefined);
    const exact = await t.call('GET', '/plants?limit=120');
    assert.equal(exact.json<unknown[]>().length, 120);
    assert.equal(exact.headers.link, undefined, 'a page that ends exactly at the last plant is the last page');
  });

  it('continues after the given id, which need not exist', async () => {
    const t = await testApp(after);
    await seed(t, [1n, 3n, 5n, 7n]);
    assert.deepEqual(
      (await t.call('GET', '/plants?after=4')).json<Array<{ id: number }>>().map((p) => p.id),
      [5, 7],
    );
    assert.equal((await t.call('GET', '/plants?after=7')).payload, '[]');
    assert.equal((await t.call('GET', '/plants?after=9223372036854775807')).payload, '[]');
    assert.equal((await t.call('GET', '/plants?after=-9223372036854775808')).json<unknown[]>().length, 4);
  });

  it('filters by tag, and the next link keeps the tag and the limit', async () => {
    const t = await testApp(after);
    await seed(
      t,
      Array.from({ length: 10 }, (_, i) => BigInt(i)),
    );
    const first = await t.call('GET', '/plants?tag=even&limit=2');
    assert.equal(first.statusCode, 200);
    assert.equal(first.payload, '[{"id":0,"name":"p0","tag":"even"},{"id":2,"name":"p2","tag":"even"}]');
    const link = nextLink(first.headers.link);
    assert.ok(link);
    const params = new URL(link, 'http://x').searchParams;
    assert.equal(params.get('tag'), 'even');
    assert.equal(params.get('limit'), '2');
    assert.match(params.get('cursor') ?? '', /^[A-Za-z0-9_-]+$/);
    const { pages } = await walk(t, '/plants?tag=even&limit=2');
    assert.deepEqual(pages, [['0', '2'], ['4', '6'], ['8']]);
    assert.equal((await t.call('GET', '/plants?tag=none')).payload, '[]');
  });

  it('keeps a tag with characters that need escaping in the next link', async () => {
    const t = await testApp(after);
    for (const id of [1, 2, 3]) {
      await t.call('POST', '/plants', { body: { id, name: 'x', tag: 'a&b c/é' } });
    }
    const { pages, links } = await walk(t, `/plants?limit=1&tag=${encodeURIComponent('a&b c/é')}`);
    assert.deepEqual(pages, [['1'], ['2'], ['3']]);
    for (const link of links) assert.equal(new URL(link, 'http://x').searchParams.get('tag'), 'a&b c/é');
  });

  it('visits every plant exactly once by following the links (250 plants, limit 7, big and negative ids)', async () => {
    const t = await testApp(after);
    const ids = new Set<bigint>();
    for (let i = 0n; ids.size < 250; i++) {
      ids.add(i * 37n - 4000n);
      ids.add(2n ** 53n + i); // beyond the doubles
      ids.add(-(2n ** 63n) + i * 3n);
      ids.add(2n ** 63n - 1n - i);
    }
    const all = [...ids].slice(0, 250);
    await seed(t, all);
    const { pages } = await walk(t, '/plants?limit=7');
    assert.equal(pages.length, Math.ceil(250 / 7));
    for (const page of pages.slice(0, -1)) assert.equal(page.length, 7);
    const seen = pages.flat();
    const expected = all.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map(String);
    assert.deepEqual(seen, expected);
  });

  describe('400 for bad parameters, naming the parameter', async () => {
    const t = await testApp(after);
    const bad: Array<[string, string]> = [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=', 'limit'],
      ['limit=1e2', 'limit'],
      ['limit=%2B5', 'limit'],
      ['limit=99999999999999999999', 'limit'],
      ['limit=5&limit=6', 'limit'],
      ['after=abc', 'after'],
      ['after=1.5', 'after'],
      ['after=', 'after'],
      ['after=9223372036854775808', 'after'],
      ['after=-9223372036854775809', 'after'],
      ['after=1&after=2', 'after'],
      ['tag=' + 't'.repeat(65), 'tag'],
      [Array.from({ length: 21 }, (_, i) => `tag=t${i}`).join('&'), 'tag'],
    ];
    for (const [query, parameter] of bad) {
      it(`?${query.slice(0, 40)}`, async () => {
        assertError(await t.call('GET', `/plants?${query}`), 400, `querystring.${parameter}`);
      });
    }
  });
});
