import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertError, testApp } from '../helpers.js';
import { nextLink } from '../toolkit.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the OpenAPI document is walked as plain JSON */
type Json = any;

/**
 * The one paging rule, over every list of the OpenAPI document (every GET whose answer is a JSON array), so
 * that a new list cannot page otherwise: `limit`, an opaque `cursor` the service made in `Link: rel="next"`,
 * walked to the end with every item once; a cursor changed, made up, or made for another list is 400
 * naming `cursor`; `after`, the alias, still taken, never with a cursor.
 */

/** Flips one character in the middle of a cursor (to another base64url character). */
function edited(cursor: string): string {
  const at = Math.floor(cursor.length / 2);
  return `${cursor.slice(0, at)}${cursor[at] === 'A' ? 'B' : 'A'}${cursor.slice(at + 1)}`;
}

describe('paging: every list pages by an opaque cursor in Link, with limit', async () => {
  const t = await testApp(after);
  const doc: Json = (await t.call('GET', '/openapi.json', { token: null })).json();
  // Three of everything: plants (and so events), endpoints, tokens (besides none stored), deliveries to the first endpoint.
  const endpoints: string[] = [];
  for (let i = 0; i < 3; i++) endpoints.push((await t.call('POST', '/webhooks', { body: { url: `https://93.184.215.14/hook${i}` } })).json().id);
  for (let id = 1; id <= 3; id++) assert.equal((await t.call('POST', '/plants', { body: { id, name: `p${id}` } })).statusCode, 200);
  for (let i = 0; i < 3; i++) assert.equal((await t.call('POST', '/tokens', { body: { name: `t${i}`, scopes: ['plants:read'] } })).statusCode, 201);
  const concrete = (path: string) => path.replace('{id}', endpoints[0]!);

  const lists = Object.entries(doc.paths as Record<string, Json>)
    .filter(([, item]) => item.get?.responses['200']?.content?.['application/json']?.schema?.type === 'array')
    .map(([path, item]) => ({ path, op: item.get, url: concrete(path) }));

  it('finds every list of the document', () => {
    assert.deepEqual(lists.map((list) => list.path).sort(), ['/events', '/plants', '/tokens', '/webhooks', '/webhooks/{id}/deliveries']);
  });

  const cursors = new Map<string, string>();

  for (const { path, op, url } of lists) {
    const query = ((op.parameters ?? []) as Json[]).filter((p) => p.in === 'query').map((p) => p.name as string);

    it(`GET ${path} documents limit, cursor (and after, its alias) and the Link header`, () => {
      for (const name of ['limit', 'cursor', 'after']) assert.ok(query.includes(name), `GET ${path} takes ${name}: ${query.join(', ')}`);
      assert.ok(op.responses['200'].headers?.Link, `GET ${path} documents Link`);
    });

    it(`GET ${path}?limit=1 walks every item once by the cursors of its Links`, async () => {
      const whole = await t.call('GET', url);
      assert.equal(whole.statusCode, 200, whole.payload);
      const all = whole.json<Array<{ id: unknown }>>().map((item) => String(item.id));
      assert.ok(all.length >= 3, `GET ${path}: ${all.length} items`);
      const seen: string[] = [];
      let next: string | undefined = `${url}?limit=1`;
      while (next !== undefined) {
        const res = await t.call('GET', next);
        assert.equal(res.statusCode, 200, `${next}: ${res.payload}`);
        const page = res.json<Array<{ id: unknown }>>();
        assert.ok(page.length <= 1, 'limit holds');
        seen.push(...page.map((item) => String(item.id)));
        next = nextLink(res.headers.link);
        if (next !== undefined) {
          const params = new URL(next, 'http://x').searchParams;
          assert.ok(params.get('cursor'), `a cursor in ${next}`);
          assert.equal(params.get('after'), null, 'never after');
          assert.equal(params.get('limit'), '1', 'the other parameters kept');
          cursors.set(path, params.get('cursor')!);
        }
        assert.ok(seen.length <= all.length + 1, 'paging ends');
      }
      assert.deepEqual(seen, all, 'every item once, in the order of the list');
    });

    it(`GET ${path} refuses a cursor changed, made up, or given with after: 400 naming cursor`, async () => {
      const cursor = cursors.get(path);
      assert.ok(cursor, 'a cursor from the walk');
      assert.equal((await t.call('GET', `${url}?limit=1&cursor=${cursor}`)).statusCode, 200);
      assertError(await t.call('GET', `${url}?limit=1&cursor=${edited(cursor)}`), 400, 'querystring.cursor');
      assertError(await t.call('GET', `${url}?limit=1&cursor=${cursor.slice(0, -2)}`), 400, 'querystring.cursor');
      for (const made of ['AAAAAAAAAAAAAAAAAAAAAAAAAAAA', Buffer.from('["plants","","1"]').toString('base64url'), 'abc']) {
        assertError(await t.call('GET', `${url}?cursor=${made}`), 400, 'querystring.cursor');
      }
      const both = await t.call('GET', `${url}?cursor=${cursor}&after=${path === '/plants' ? '1' : 'x'}`);
      assert.equal(both.statusCode, 400, both.payload);
      assert.match(both.json().message, /querystring\.(cursor|after)/);
    });
  }

  it('a cursor made for one list is refused by every other, naming the list it was made for', async () => {
    for (const [madeFor, cursor] of cursors) {
      for (const { path, url } of lists) {
        if (path === madeFor) continue;
        const message = assertError(await t.call('GET', `${url}?cursor=${cursor}`), 400, 'querystring.cursor');
        assert.match(message, /made for another list/, `${madeFor}'s cursor at ${path}: ${message}`);
      }
    }
  });

  it('a cursor is bound to its filters: another status, type or sort is 400 naming cursor', async () => {
    const pairs: Array<[string, string]> = [
      ['/tokens?status=active&limit=1', '/tokens?status=revoked'],
      [`/webhooks/${endpoints[0]}/deliveries?status=pending&limit=1`, `/webhooks/${endpoints[0]}/deliveries`],
      [`/webhooks/${endpoints[0]}/deliveries?limit=1`, `/webhooks/${endpoints[1]}/deliveries`],
      ['/events?type=plant.created&limit=1', '/events?type=plant.deleted'],
      ['/plants?sort=-id&limit=1', '/plants?sort=id'],
    ];
    for (const [from, to] of pairs) {
      const link = nextLink((await t.call('GET', from)).headers.link);
      assert.ok(link, `${from} has a next page`);
      const cursor = new URL(link, 'http://x').searchParams.get('cursor')!;
      const message = assertError(await t.call('GET', `${to}${to.includes('?') ? '&' : '?'}cursor=${cursor}`), 400, 'querystring.cursor');
      assert.match(message, /other filters/, `${from} → ${to}: ${message}`);
    }
  });

  it('after, the alias the release before wrote in its Links, is still taken on every list', async () => {
    const firstId = async (url: string) => String((await t.call('GET', `${url}?limit=1`)).json()[0].id);
    for (const { path, url } of lists) {
      const id = await firstId(url);
      const res = await t.call('GET', `${url}?after=${id}`);
      assert.equal(res.statusCode, 200, `${path}: ${res.payload}`);
      assert.ok(!res.json().some((item: { id: unknown }) => String(item.id) === id), `${path}: starts after ${id}`);
    }
  });
});
