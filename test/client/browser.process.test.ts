import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { browserSkip, watchedPage } from '../chromium.js';
import { tempDir, TOKEN } from '../helpers.js';
import { startServer } from '../process.js';
import { needs } from '../toolkit.js';

const skip = needs("the client's browser test", browserSkip);

/** The package's built modules, served as they are (no bundler), and openapi-fetch's ESM build. */
const CLIENT_DIST = fileURLToPath(new URL('../../../packages/client/dist/', import.meta.url));
const OPENAPI_FETCH = fileURLToPath(import.meta.resolve('openapi-fetch'));

/** The page's import map: bare names to the files above, as a browser app without a bundler would write it. */
const IMPORT_MAP = {
  imports: {
    '@plant-store/client': '/client/index.js',
    '@plant-store/client/json': '/client/json.js',
    'openapi-fetch': '/openapi-fetch/index.mjs',
  },
};

/**
 * What the page runs: the client against the service (another origin, allowed by CORS_ORIGINS), results
 * on window.results with bigints as `<digits>n` strings (the page's values cross to the test as JSON).
 */
function mainScript(serviceUrl: string): string {
  return `import { createClient } from '@plant-store/client';
import { parseJson } from '@plant-store/client/json';

const show = (value) => JSON.parse(JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? v + 'n' : v)));
const client = createClient({ baseUrl: ${JSON.stringify(serviceUrl)}, headers: { Authorization: 'Bearer ${TOKEN}' } });
const results = {};
try {
  const id = 9223372036854775807n;
  const created = await client.POST('/plants', { body: { id, name: 'Monstera', tag: 'tropical' } });
  results.created = { status: created.response.status, data: created.data };
  const read = await client.GET('/plants/{id}', { params: { path: { id } } });
  const etag = read.response.headers.get('etag');
  results.read = { data: read.data, idType: typeof read.data.id, etag: etag !== null };
  // A conditional write (If-Match: a header the preflight must allow) and a count (Prefer, X-Total-Count: exposed).
  const stale = await client.PATCH('/plants/{id}', { params: { path: { id }, header: { 'if-match': '"stale"' } }, body: { tag: 'x' } });
  const current = await client.PATCH('/plants/{id}', { params: { path: { id }, header: { 'if-match': etag } }, body: { tag: 'big' } });
  results.conditional = { stale: stale.response.status, current: current.response.status, tag: current.data.tag };
  const listed = await client.GET('/plants', { params: { query: { after: 9223372036854775806n }, header: { prefer: 'count=exact' } } });
  results.listed = { data: listed.data, count: listed.response.headers.get('x-total-count') };
  const missing = await client.GET('/plants/{id}', { params: { path: { id: 1 } } });
  results.missing = { status: missing.response.status, error: missing.error };
  const anonymous = await createClient({ baseUrl: ${JSON.stringify(serviceUrl)} }).GET('/plants');
  results.anonymous = { status: anonymous.response.status, error: anonymous.error.error, challenge: anonymous.response.headers.get('www-authenticate') };
  const exported = await client.GET('/plants', { params: { query: { format: 'ndjson' } }, parseAs: 'text' });
  results.exported = exported.data.trim().split('\\n').map((line) => parseJson(line));
} catch (error) {
  results.thrown = String(error && error.stack || error);
}
window.results = show(results);
`;
}

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>@plant-store/client in a browser</title><link rel="icon" href="data:,">
<script type="importmap">${JSON.stringify(IMPORT_MAP)}</script>
<script type="module" src="/main.js"></script>
</head><body></body></html>`;

/** The page's own origin: the page, its script, the package's modules and openapi-fetch's, nothing else. */
function pageServer(main: () => string): Server {
  return createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://page').pathname;
    const send = (type: string, body: string) => response.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    const client = /^\/client\/([\w-]+\.js)$/.exec(path);
    if (path === '/') send('text/html; charset=utf-8', PAGE);
    else if (path === '/main.js') send('text/javascript', main());
    else if (client) send('text/javascript', readFileSync(join(CLIENT_DIST, client[1]!), 'utf8'));
    else if (path === '/openapi-fetch/index.mjs') send('text/javascript', readFileSync(OPENAPI_FETCH, 'utf8'));
    else response.writeHead(404).end();
  });
}

test(
  "the package's ESM modules in Chromium, unbundled (an import map), call a live server on another origin with every id exact",
  { skip, timeout: 120_000 },
  async () => {
    const dir = tempDir(after);
    let serviceUrl = '';
    const pages = pageServer(() => mainScript(serviceUrl));
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    after(() => new Promise<void>((resolve) => pages.close(() => resolve())));
    const pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    const service = await startServer(after, {
      env: { DATABASE_URL: `file:${join(dir, 'plants.db')}`, PLANT_STORE_TOKENS: TOKEN, CORS_ORIGINS: pageOrigin },
    });
    serviceUrl = service.url;

    const { page, requests, errors } = await watchedPage(dir, after);

    await page.goto(`${pageOrigin}/`);
    await page.waitForFunction(() => 'results' in globalThis, undefined, { timeout: 60_000 });
    const results = await page.evaluate(() => (globalThis as unknown as { results: unknown }).results);

    const big = '9223372036854775807n';
    assert.deepEqual(results, {
      created: { status: 200, data: { name: 'Monstera', tag: 'tropical' } },
      read: { data: { id: big, name: 'Monstera', tag: 'tropical' }, idType: 'bigint', etag: true },
      conditional: { stale: 412, current: 200, tag: 'big' },
      listed: { data: [{ id: big, name: 'Monstera', tag: 'big' }], count: '1' },
      missing: { status: 404, error: { error: 404, message: 'no plant with id 1', code: 'not_found' } },
      anonymous: { status: 401, error: 401, challenge: 'Bearer realm="plant-store"' },
      exported: [{ id: big, name: 'Monstera', tag: 'big' }],
    });
    // Chromium logs each non-2xx answer as an error; those the page asked for are expected.
    assert.deepEqual(
      errors.filter((error) => !/^Failed to load resource: the server responded with a status of (401|404|412) /.test(error)),
      [],
    );

    // The modules came from the page's origin as files, unbundled; the calls went to the service.
    const fromPage = requests.filter((url) => url.startsWith(pageOrigin)).map((url) => url.slice(pageOrigin.length));
    assert.deepEqual(fromPage.sort(), [
      '/',
      '/client/content.js',
      '/client/event-stream.js',
      '/client/event-types.js',
      '/client/follow.js',
      '/client/index.js',
      '/client/json.js',
      '/client/string-end.js',
      '/main.js',
      '/openapi-fetch/index.mjs',
    ]);
    for (const url of requests) assert.ok(url.startsWith(pageOrigin) || url.startsWith(service.url), `a request left both origins: ${url}`);
    assert.ok(requests.includes(`${service.url}/plants/9223372036854775807`), requests.join('\n'));
  },
);
