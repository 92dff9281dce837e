import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { assertError, testApp } from '../helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the OpenAPI document is walked as plain JSON */
type Json = any;

const VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
/** What a browser sends when it opens a page (Chromium's and Firefox's). */
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

describe('GET /', async () => {
  const t = await testApp(after);
  const get = (accept?: string, method: 'GET' | 'HEAD' = 'GET') =>
    t.call(method, '/', { token: null, headers: accept === undefined ? {} : { accept } });

  it('leads a browser to the console (on by default), without a token, by a relative and temporary redirect', async () => {
    const res = await get(BROWSER);
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, 'console');
    // Relative: under a proxy prefix it stays under the prefix.
    assert.equal(new URL(String(res.headers.location), 'http://host/').pathname, '/console');
    assert.equal(new URL(String(res.headers.location), 'http://host/plant-store/').pathname, '/plant-store/console');
    assert.equal(res.payload, '');
    assert.equal(res.headers.vary, 'Accept');
  });

  it('tells any other client (curl, a script) where the pages are, and the version, as JSON', async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'application/*', 'text/html;q=0', 'application/json, text/html;q=0.5', 'image/png']) {
      const res = await get(accept);
      assert.equal(res.statusCode, 200, `Accept: ${accept}`);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.equal(res.headers.vary, 'Accept');
      assert.equal(res.payload, `{"name":"plant-store","version":"${VERSION}","docs":"/docs","openapi":"/openapi.json","console":"/console"}`);
    }
  });

  it("names pages that are there, each a browser's or a tool's", async () => {
    const index = (await get('*/*')).json<Record<string, string>>();
    for (const name of ['docs', 'openapi', 'console']) {
      const res = await t.call('GET', index[name]!, { token: null });
      assert.equal(res.statusCode, 200, `${name}: ${index[name]}`);
    }
  });

  it('asks for HTML when the client names text/html (or text/*) at least as high as JSON', async () => {
    for (const accept of ['text/html', 'text/*', 'text/html, application/json', 'application/json;q=0.5, text/html', ' TEXT/HTML ; q=0.9'])
      assert.equal((await get(accept)).statusCode, 302, accept);
  });

  it('answers HEAD alike, and takes a token too (a browser may send one)', async () => {
    assert.equal((await get(BROWSER, 'HEAD')).statusCode, 302);
    const head = await get('*/*', 'HEAD');
    assert.equal(head.statusCode, 200);
    assert.equal(head.payload, '');
    assert.equal((await t.call('GET', '/', { headers: { accept: BROWSER } })).statusCode, 302);
    assert.equal((await t.call('GET', '/')).statusCode, 200);
  });

  it('is an operation of the API: public, in the OpenAPI document with its index and its redirect', async () => {
    const document: Json = (await t.call('GET', '/openapi.json', { token: null })).json();
    const operation = document.paths['/']?.get;
    assert.ok(operation, 'GET / is documented');
    assert.equal(operation.operationId, 'index');
    assert.deepEqual(operation.security, []);
    assert.deepEqual(Object.keys(operation.responses['200'].content['application/json'].schema.properties).sort(), [
      'console',
      'docs',
      'name',
      'openapi',
      'version',
    ]);
    assert.ok(operation.responses['302'].headers.Location, 'the redirect names its Location');
    assert.equal(operation.responses['302'].content, undefined);
  });

  it('refuses a query parameter, as every operation does, and takes GET and HEAD only', async () => {
    assertError(await t.call('GET', '/?x=1', { token: null }), 400, 'unknown query parameter "x"');
    assert.equal((await t.call('POST', '/', { token: null })).statusCode, 405);
  });
});

describe('GET / with CONSOLE=off', async () => {
  const t = await testApp(after, { config: { console: false } });

  it('leads a browser to the API reference, and names no console to any other client', async () => {
    const page = await t.call('GET', '/', { token: null, headers: { accept: BROWSER } });
    assert.equal(page.statusCode, 302);
    assert.equal(page.headers.location, 'docs');
    const index = await t.call('GET', '/', { token: null, headers: { accept: '*/*' } });
    assert.equal(index.payload, `{"name":"plant-store","version":"${VERSION}","docs":"/docs","openapi":"/openapi.json"}`);
  });
});
