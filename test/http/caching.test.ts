import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { testApp } from '../helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the OpenAPI document is walked as plain JSON */
type Json = any;

/**
 * The caching rules, over every GET operation of the OpenAPI document (the routes' own table), so that a
 * new read cannot leave them out: an ETag, `Cache-Control: private, no-cache` (`no-cache` for a public
 * one), If-None-Match answered 304 with the ETag and no body, `Vary` naming each request header the
 * answer depends on; and both documented. Only the probes and the root, which must never be kept, are
 * `no-store` without an ETag; so are errors, and every answer that holds a secret.
 */

/** The reads that are never kept: the probes (a cached "ready" would be a lie) and the root (a redirect for browsers). */
const NEVER_KEPT = new Set(['/', '/healthz', '/readyz']);

describe('caching: every read has an ETag, revalidates with If-None-Match, and says what it varies by', async () => {
  const t = await testApp(after);
  const doc: Json = (await t.call('GET', '/openapi.json', { token: null })).json();
  // Something to read on every path: a plant (and so events), an endpoint (and so a delivery), a stored token.
  assert.equal((await t.call('POST', '/plants', { body: { id: 1, name: 'Fern' } })).statusCode, 200);
  const endpoint = (await t.call('POST', '/webhooks', { body: { url: 'https://93.184.215.14/hook' } })).json();
  const token = (await t.call('POST', '/tokens', { body: { name: 'reader', scopes: ['plants:read'] } })).json();
  const ids: Record<string, string> = { '/plants/{id}': '1', '/webhooks/{id}': endpoint.id, '/tokens/{id}': token.id };
  const concrete = (path: string) => path.replace('{id}', ids[path] ?? ids[path.replace(/\/[a-z-]+$/, '')] ?? endpoint.id);

  const reads = Object.entries(doc.paths as Record<string, Json>)
    .filter(([, item]) => item.get !== undefined)
    .map(([path, item]) => ({ path, op: item.get, url: concrete(path) }));

  it('walks every read of the document', () => {
    assert.ok(reads.length >= 12, `${reads.length} reads: ${reads.map((r) => r.path).join(', ')}`);
  });

  const get = (url: string, headers: Record<string, string> = {}) => t.call('GET', url, { headers });

  for (const { path, op, url } of reads) {
    if (NEVER_KEPT.has(path)) {
      it(`GET ${path} is never kept: no-store, no ETag`, async () => {
        const res = await get(url, { accept: 'application/json' });
        assert.equal(res.headers['cache-control'], 'no-store');
        assert.equal(res.headers.etag, undefined);
      });
      continue;
    }
    const isPublic = Array.isArray(op.security) && op.security.length === 0;
    const cacheControl = isPublic ? 'no-cache' : 'private, no-cache';
    const mediaTypes = Object.keys(op.responses['200'].content ?? {});
    const varies = [
      ...(mediaTypes.length > 1 ? ['accept'] : []),
      ...headerParams(op).filter((name) => name === 'prefer' || name === 'authorization'),
    ];

    it(`GET ${path}: ETag and ${cacheControl}; If-None-Match → 304 with the ETag, no body; documented`, async () => {
      const res = await get(url);
      assert.equal(res.statusCode, 200, res.payload);
      const etag = String(res.headers.etag);
      assert.match(etag, /^(W\/)?"[^"]+"$/, `GET ${path} has an ETag`);
      assert.equal(res.headers['cache-control'], cacheControl);
      for (const name of varies) assert.ok(varyOf(res).includes(name), `GET ${path} varies by ${name}: Vary is "${String(res.headers.vary)}"`);

      const opaque = etag.replace(/^W\//, '');
      for (const sent of [etag, `W/${opaque}`, `"other", ${etag}`, '*']) {
        const again = await get(url, { 'if-none-match': sent });
        assertNotModified(again, etag, `GET ${path} with If-None-Match: ${sent}`);
        assert.equal(again.headers['cache-control'], cacheControl);
        assert.deepEqual(varyOf(again), varyOf(res), 'a 304 varies as its 200 does');
      }
      const head = await t.call('HEAD', url, { headers: { 'if-none-match': etag } });
      assert.equal(head.statusCode, 304, `HEAD ${path}`);
      const other = await get(url, { 'if-none-match': '"not-this-one"' });
      assert.equal(other.statusCode, 200, 'another tag: the whole answer');
      assert.equal(other.headers.etag, etag, 'the same answer, the same tag');

      // The document says so: the header parameter, the 304, the answer headers.
      assert.ok(headerParams(op).includes('if-none-match'), `GET ${path} documents If-None-Match`);
      assert.ok(op.responses['304'], `GET ${path} documents its 304`);
      for (const status of ['200', '304']) {
        const documented = Object.keys(op.responses[status].headers ?? {}).map((name) => name.toLowerCase());
        for (const name of ['etag', 'cache-control', ...(varies.length > 0 ? ['vary'] : [])]) {
          assert.ok(documented.includes(name), `GET ${path} ${status} documents ${name}: ${documented.join(', ')}`);
        }
      }
    });

    it(`GET ${path} with If-Match: 412 unless it names the ETag strongly (or is *), judged before If-None-Match; documented`, async () => {
      const etag = String((await get(url)).headers.etag);
      const strong = !etag.startsWith('W/');
      for (const method of ['GET', 'HEAD'] as const) {
        const star = await t.call(method, url, { headers: { 'if-match': '*' } });
        assert.equal(star.statusCode, 200, `${method} ${path} If-Match: *`);
        const named = await t.call(method, url, { headers: { 'if-match': `"other", ${etag}` } });
        assert.equal(named.statusCode, strong ? 200 : 412, `${method} ${path} If-Match: its ETag ${etag}`);
        const stale = await t.call(method, url, { headers: { 'if-match': '"not-this-one"', 'if-none-match': etag } });
        assert.equal(stale.statusCode, 412, `${method} ${path}: a stale If-Match wins over a current If-None-Match`);
        // An error, kept by no cache: not the revalidated read's Cache-Control, set before its If-Match was judged.
        assert.equal(stale.headers['cache-control'], 'no-store', `${method} ${path}: the 412's Cache-Control`);
        if (method === 'GET') assert.equal(stale.json().code, 'precondition_failed');
      }
      assert.equal((await get(url, { 'if-match': 'abc' })).statusCode, 400, 'a malformed If-Match is 400');
      assert.ok(headerParams(op).includes('if-match'), `GET ${path} documents If-Match`);
      assert.ok(op.responses['412'], `GET ${path} documents its 412`);
    });

    if (op.responses['200'].content?.['application/json']?.schema?.type === 'array') {
      it(`GET ${path} is a list: its ETag is weak (a hash of the page, not of its bytes)`, async () => {
        assert.match(String((await get(url)).headers.etag), /^W\/"[A-Za-z0-9_-]+"$/);
      });
    }
  }

  it('an error is never kept: no-store, no ETag', async () => {
    for (const url of ['/plants/404', '/tokens/nope', `/webhooks/ep_01ARZ3NDEKTSV4RRFFQ69G5FAV`, '/plants?limit=0']) {
      const res = await get(url, { 'if-none-match': '*' });
      assert.ok(res.statusCode >= 400, `${url}: ${res.statusCode}`);
      assert.equal(res.headers['cache-control'], 'no-store', url);
      assert.equal(res.headers.etag, undefined, url);
    }
  });

  it('an answer holding a secret is never kept: a token made, an endpoint made, a secret rotated', async () => {
    const made = [
      await t.call('POST', '/tokens', { body: { name: 'secret-holder', scopes: ['plants:read'] } }),
      await t.call('POST', '/webhooks', { body: { url: 'https://93.184.215.14/other' } }),
      await t.call('POST', `/webhooks/${endpoint.id}/rotate-secret`),
    ];
    for (const res of made) {
      assert.ok(res.statusCode < 300, res.payload);
      assert.equal(res.headers['cache-control'], 'no-store');
    }
  });

  it('a malformed If-None-Match is 400 naming the header, on a list as on a plant', async () => {
    for (const url of ['/plants', '/plants/1', '/events', '/tokens', '/webhooks']) {
      const res = await get(url, { 'if-none-match': 'abc' });
      assert.equal(res.statusCode, 400, `${url}: ${res.payload}`);
      assert.match(res.json().message, /headers\.if-none-match/);
    }
  });
});

describe('caching: a list page ETag follows what the page says', async () => {
  const t = await testApp(after);
  for (let id = 1; id <= 3; id++) await t.call('POST', '/plants', { body: { id, name: `p${id}` } });
  const tagOf = async (url: string, headers: Record<string, string> = {}) => {
    const res = await t.call('GET', url, { headers });
    assert.equal(res.statusCode, 200, res.payload);
    return String(res.headers.etag);
  };

  it('changes when a plant of the page changes, is deleted or one is added to it; stays while the page stays', async () => {
    const first = await tagOf('/plants');
    assert.equal(await tagOf('/plants'), first, 'the same page, the same tag');
    await t.call('PATCH', '/plants/2', { body: { tag: 'shade' } });
    const patched = await tagOf('/plants');
    assert.notEqual(patched, first);
    await t.call('DELETE', '/plants/3');
    const deleted = await tagOf('/plants');
    assert.notEqual(deleted, patched);
    await t.call('POST', '/plants', { body: { id: 3, name: 'p3' } });
    await t.call('PATCH', '/plants/2', { body: { tag: null } });
    assert.equal(await tagOf('/plants'), first, 'the same content again, the same tag: it stands for the content');
  });

  it('changes when a next page appears (its Link) though the page is the same', async () => {
    const before = await tagOf('/plants?limit=3&sort=-id');
    const old = await t.call('GET', '/plants?limit=3&sort=-id', { headers: { 'if-none-match': before } });
    assert.equal(old.statusCode, 304);
    await t.call('POST', '/plants', { body: { id: 0, name: 'p0' } });
    const res = await t.call('GET', '/plants?limit=3&sort=-id', { headers: { 'if-none-match': before } });
    assert.equal(res.statusCode, 200, 'the same three plants, but now a next page: not the answer the client holds');
    assert.ok(res.headers.link);
  });

  it('with Prefer: count=exact, changes with the total; Vary names Accept and Prefer', async () => {
    const counted = await t.call('GET', '/plants?limit=1', { headers: { prefer: 'count=exact' } });
    assert.equal(counted.headers['x-total-count'], '4');
    assert.notEqual(counted.headers.etag, await tagOf('/plants?limit=1'), 'the total is part of the answer');
    assert.deepEqual(varyOf(counted), ['accept', 'prefer']);
    await t.call('POST', '/plants', { body: { id: 99, name: 'p99' } });
    const more = await t.call('GET', '/plants?limit=1', { headers: { prefer: 'count=exact', 'if-none-match': String(counted.headers.etag) } });
    assert.equal(more.statusCode, 200);
    assert.equal(more.headers['x-total-count'], '5');
  });

  it('an export is not kept (no ETag, no-store), and varies by Accept as a page does', async () => {
    for (const headers of [{ accept: 'text/csv' }, { accept: 'application/x-ndjson' }]) {
      const res = await t.call('GET', '/plants', { headers });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers.etag, undefined);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.deepEqual(varyOf(res), ['accept', 'prefer']);
    }
  });

  it('keeps the Vary CORS gave (Origin) and adds its own', async () => {
    const cors = await testApp(after, { config: { corsOrigins: ['https://console.example'] } });
    const res = await cors.call('GET', '/plants', { headers: { origin: 'https://console.example' } });
    assert.deepEqual(varyOf(res), ['origin', 'accept', 'prefer']);
  });

  it('GET /plants/{id} keeps its version as its strong ETag', async () => {
    const res = await t.call('GET', '/plants/1');
    assert.match(String(res.headers.etag), /^"\d+"$/);
    assert.equal(res.headers['cache-control'], 'private, no-cache');
  });

  it('GET /token varies by Authorization: another token, another answer', async () => {
    const reader = await t.tokenWith('plants:read');
    const mine = await t.call('GET', '/token');
    const theirs = await t.call('GET', '/token', { token: reader });
    assert.ok(varyOf(mine).includes('authorization'));
    assert.notEqual(mine.headers.etag, theirs.headers.etag);
  });
});

function headerParams(op: Json): string[] {
  return ((op.parameters ?? []) as Json[]).filter((p) => p.in === 'header').map((p) => String(p.name).toLowerCase());
}

function varyOf(res: LightMyRequestResponse): string[] {
  const header = res.headers.vary;
  return header === undefined
    ? []
    : String(header)
        .split(',')
        .map((name) => name.trim().toLowerCase());
}

function assertNotModified(res: LightMyRequestResponse, etag: string, what: string): void {
  assert.equal(res.statusCode, 304, `${what}: ${res.statusCode} ${res.payload.slice(0, 200)}`);
  assert.equal(res.payload, '', `${what}: no body`);
  assert.equal(res.headers.etag, etag, `${what}: the ETag`);
}
