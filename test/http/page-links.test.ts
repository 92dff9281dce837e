import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { testApp } from '../helpers.js';
import { nextLink } from '../toolkit.js';

/**
 * PAGE_LINKS=1.0: during an upgrade from 1.0.x, the new instances write their Links in the forms release
 * 1.0 reads (`after=<id>`; GET /plants's unsigned `[1, …]` cursor), so that a client following a Link from
 * a new instance to an old one is not refused; and the 1.0 CLI, which reads `after` from a token list's
 * Link, still walks every page. Both forms are read whatever the setting.
 */

/** The lists, with how many items each gets below. */
const LISTS = ['/plants', '/events', '/tokens', '/webhooks', '/webhooks/{id}/deliveries'];

describe('PAGE_LINKS=1.0: Links in the forms of release 1.0', async () => {
  const t = await testApp(after, { config: { pageLinks: '1.0' } });
  const endpoint = (await t.call('POST', '/webhooks', { body: { url: 'https://93.184.215.14/hook' } })).json<{ id: string }>().id;
  for (let i = 0; i < 2; i++) await t.call('POST', '/webhooks', { body: { url: `https://93.184.215.14/other${i}` } });
  for (let id = 1; id <= 3; id++) assert.equal((await t.call('POST', '/plants', { body: { id, name: `p${id}` } })).statusCode, 200);
  for (let i = 0; i < 3; i++) assert.equal((await t.call('POST', '/tokens', { body: { name: `t${i}`, scopes: ['plants:read'] } })).statusCode, 201);

  for (const path of LISTS) {
    const url = path.replace('{id}', endpoint);
    it(`GET ${path} writes the release before's form and is walked to the end by it`, async () => {
      const all = (await t.call('GET', url)).json<Array<{ id: unknown }>>().map((item) => String(item.id));
      assert.ok(all.length >= 3, `${path}: ${all.length} items`);
      const seen: string[] = [];
      let next: string | undefined = `${url}?limit=1`;
      while (next !== undefined) {
        const res = await t.call('GET', next);
        assert.equal(res.statusCode, 200, `${next}: ${res.payload}`);
        seen.push(...res.json<Array<{ id: unknown }>>().map((item) => String(item.id)));
        next = nextLink(res.headers.link);
        if (next === undefined) break;
        const params = new URL(next, 'http://x').searchParams;
        if (path === '/plants') {
          // 1.0's layout: base64url of JSON [1, fingerprint, "id"], no MAC.
          const fields: unknown = JSON.parse(Buffer.from(params.get('cursor')!, 'base64url').toString());
          assert.ok(Array.isArray(fields) && fields[0] === 1 && fields.length === 3, JSON.stringify(fields));
          assert.equal(fields[2], seen.at(-1));
        } else {
          assert.equal(params.get('after'), seen.at(-1), `${next}: after names the last item`);
          assert.equal(params.get('cursor'), null);
        }
      }
      assert.deepEqual(seen, all);
    });
  }

  it('still takes a signed cursor (a Link of an instance without the setting)', async () => {
    const signed = await testApp(after);
    for (let id = 1; id <= 2; id++) await signed.call('POST', '/plants', { body: { id, name: `p${id}` } });
    const next = nextLink((await signed.call('GET', '/plants?limit=1')).headers.link)!;
    const res = await t.call('GET', next);
    assert.equal(res.statusCode, 200, res.payload);
    assert.deepEqual(res.json(), [{ id: 2, name: 'p2' }]);
  });
});

describe('PAGE_LINKS as a setting', () => {
  it('is signed by default, takes 1.0, and refuses anything else naming itself', () => {
    assert.equal(loadConfig({}).pageLinks, 'signed');
    assert.equal(loadConfig({ PAGE_LINKS: '1.0' }).pageLinks, '1.0');
    assert.throws(() => loadConfig({ PAGE_LINKS: 'after' }), /PAGE_LINKS/);
  });
});
