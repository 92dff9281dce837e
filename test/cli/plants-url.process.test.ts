import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { assertFails, cli, CLI_JS, request, run, startServer } from '../process.js';
import { freePort } from '../store/postgres/pg-server.js';
import { lossyProxy } from './lossy-proxy.js';

/**
 * `plant-store plants … --url URL`: the plant commands through a running service's API, with the typed
 * client, from a folder where no store is (none is ever opened). Every refusal is the service's message,
 * every failure one line.
 */

const TOKEN = 'cli-url-token-0123456789abcdefghijkl';
const MAX = '9223372036854775807';

describe('plants through a running service (--url)', async () => {
  const dir = tempDir(after);
  const databaseUrl = `file:${join(dir, 'server.db')}`;
  const server = await startServer(after, { env: { DATABASE_URL: databaseUrl, PLANT_STORE_TOKENS: TOKEN } });
  // The CLI runs from a folder of its own without DATABASE_URL: a store opened would be ./data/plant-store.db here.
  const away = tempDir(after);
  const plants = (args: string[], env: Record<string, string> = {}, input?: string) =>
    run([CLI_JS, 'plants', ...args], { cwd: away, env: { PLANT_STORE_TOKEN: TOKEN, ...env }, input });
  const remote = (args: string[], input?: string) => plants([...args, '--url', server.url], {}, input);
  const reader = (await cli(databaseUrl, 'token', 'create', '--name', 'reader', '--scope', 'plants:read')).stdout.trim();
  after(() => assert.ok(!existsSync(join(away, 'data')), 'no store was opened: no ./data folder made'));

  test('create, get and delete, ids exact beyond 2^53; each write says what it did where', async () => {
    const created = await remote(['create', '--id', MAX, '--name', 'Max', '--tag', 'big']);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stdout, `{\n  "id": ${MAX},\n  "name": "Max",\n  "tag": "big"\n}\n`);
    assert.equal(created.stderr, `created plant ${MAX} at ${server.url}\n`);
    // Again: the service's Warning says it replaced the plant, and the CLI says so in its words, once.
    const again = await remote(['create', '--id', MAX, '--name', 'Max', '--tag', 'big']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stderr, `replaced plant ${MAX} at ${server.url}\n`);
    assert.equal((await request(`${server.url}/plants/${MAX}`, { token: TOKEN })).text, `{"id":${MAX},"name":"Max","tag":"big"}`);

    const got = await remote(['get', MAX]);
    assert.equal(got.code, 0, got.stderr);
    assert.equal(got.stdout, created.stdout);
    assert.equal(got.stderr, '');

    const deleted = await remote(['delete', MAX]);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal(deleted.stdout, '');
    assert.equal(deleted.stderr, `deleted plant ${MAX} at ${server.url}\n`);
    assert.equal((await request(`${server.url}/plants/${MAX}`, { token: TOKEN })).status, 404);
  });

  test('PLANT_STORE_URL names the service when --url does not; --url wins; a DATABASE_URL is not even looked at', async () => {
    const env = { PLANT_STORE_URL: server.url, DATABASE_URL: 'file:/nonexistent/never.db' };
    const created = await plants(['create', '--id', '7', '--name', 'Seven'], env);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stderr, `created plant 7 at ${server.url}\n`);
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const got = await plants(['get', '7', '--url', server.url], { ...env, PLANT_STORE_URL: nowhere });
    assert.equal(got.code, 0, got.stderr);
    assert.match(got.stdout, /"name": "Seven"/);
    // A trailing slash is the same address.
    assert.equal((await plants(['get', '7'], { PLANT_STORE_URL: `${server.url}/` })).code, 0);
  });

  test('import streams a file (NDJSON, a JSON array, CSV); export streams NDJSON and CSV, byte for byte as GET /plants does', async () => {
    const ndjson = join(dir, 'many.ndjson');
    writeFileSync(
      ndjson,
      Array.from({ length: 2100 }, (_, i) => `{"id":${1000 + i},"name":"Plant ${i}","tag":"${i % 2 ? 'odd' : 'even'}"}`).join('\n'),
    );
    const imported = await remote(['import', ndjson]);
    assert.equal(imported.code, 0, imported.stderr);
    assert.deepEqual(JSON.parse(imported.stdout), { created: 2100, replaced: 0 });
    assert.equal(imported.stderr, `imported 2100 plants from ndjson into ${server.url}: 2100 created, 0 replaced\n`);

    const array = await remote(['import', '-'], `[{"id":${MAX},"name":"Max"},{"id":1000,"name":"Plant 0","tag":"even"}]`);
    assert.equal(array.code, 0, array.stderr);
    assert.deepEqual(JSON.parse(array.stdout), { created: 1, replaced: 1 });
    assert.match(array.stderr, /from json into/);
    const csv = await remote(['import', '-', '--format', 'csv', '--mode', 'create-only'], 'id,name,tag\r\n5,"Palm, tall",\r\n');
    assert.equal(csv.code, 0, csv.stderr);
    assert.deepEqual(JSON.parse(csv.stdout), { created: 1, replaced: 0 });

    for (const format of ['ndjson', 'csv']) {
      const exported = await remote(['export', '--format', format, '--sort', '-name', '--tag', 'odd', '--tag', 'none']);
      assert.equal(exported.code, 0, exported.stderr);
      const expected = await request(`${server.url}/plants?format=${format}&sort=-name&tag=odd&tag=none`, { token: TOKEN });
      assert.equal(exported.stdout, expected.text, format);
      assert.equal(exported.stdout.split('\n').length, 1050 + (format === 'csv' ? 2 : 1));
    }
  });

  test('list follows the pages to the end as NDJSON, the same lines as an export; --limit caps the total; --format table', async () => {
    const all = await remote(['list']);
    assert.equal(all.code, 0, all.stderr);
    const exported = (await request(`${server.url}/plants?format=ndjson`, { token: TOKEN })).text;
    assert.equal(all.stdout, exported, 'every plant of every page, in id order, ids exact');
    assert.ok(all.stdout.split('\n').length > 2100, 'more than two pages of a thousand');
    assert.ok(all.stdout.endsWith(`{"id":${MAX},"name":"Max"}\n`));

    const capped = await remote(['list', '--limit', '1500', '--sort', '-id']);
    assert.equal(capped.code, 0, capped.stderr);
    const descending = (await request(`${server.url}/plants?format=ndjson&sort=-id`, { token: TOKEN })).text.split('\n');
    assert.equal(capped.stdout, `${descending.slice(0, 1500).join('\n')}\n`);

    const found = await remote(['list', '--q', 'plant 209', '--tag', 'even', '--sort', 'name']);
    assert.equal(found.stdout, (await request(`${server.url}/plants?format=ndjson&q=plant%20209&tag=even&sort=name`, { token: TOKEN })).text);
    assert.equal(found.stdout.split('\n').length, 6, '2090, 2092 … 2098');

    const table = await remote(['list', '--limit', '2', '--format', 'table']);
    assert.equal(table.stdout, 'ID  NAME        TAG\n5   Palm, tall\n7   Seven\n');
    const none = await remote(['list', '--q', 'no such plant', '--format', 'table']);
    assert.equal(none.stdout, 'ID  NAME  TAG\n');
    assert.equal((await remote(['list', '--q', 'no such plant'])).stdout, '');
  });

  test("the service's refusals are its messages, one line, exit 1: 404, 400, 401, 403, 409", async () => {
    assertFails(await remote(['get', '123']), `no plant with id 123 at ${server.url}`);
    assertFails(await remote(['delete', '123']), `no plant with id 123 at ${server.url}`);
    assertFails(await remote(['create', '--id', '8', '--name', '']), 'body.name must not be empty');
    assertFails(await remote(['create', '--id', '8', '--name', 'x', '--tag', 't'.repeat(65)]), 'body.tag must be at most 64 characters long');
    // The list's bounds are checked before anything is sent, the same words as on the store.
    assertFails(await remote(['list', '--q', 'q'.repeat(101)]), /^plant-store: plants list: --q must be at most 100 characters, got 101; see /);
    assertFails(await remote(['import', '-'], '{"id":60,"name":"ok"}\n{"id":61,"name":""}\n'), 'nothing imported: line 2: name must not be empty');
    assertFails(
      await remote(['import', '-', '--mode', 'create-only'], '{"id":62,"name":"new"}\n{"id":7,"name":"again"}\n'),
      // Said once ("nothing imported", not again at the end as the service's message has it).
      'nothing imported: a plant with id 7 exists already (mode=create-only)',
    );
    assert.equal((await request(`${server.url}/plants/60`, { token: TOKEN })).status, 404, 'nothing imported');
    assert.equal((await request(`${server.url}/plants/62`, { token: TOKEN })).status, 404, 'nothing imported');

    const unknown = await plants(['list', '--url', server.url], { PLANT_STORE_TOKEN: 'ps_not-a-token-of-this-service' });
    assertFails(unknown, /^plant-store: .*\(the token in PLANT_STORE_TOKEN, at http:\/\/127\.0\.0\.1:\d+\)\n$/);
    const readOnly = (args: string[], input?: string) => plants([...args, '--url', server.url], { PLANT_STORE_TOKEN: reader }, input);
    const lacks = 'this token lacks the scope plants:write that this operation needs';
    assertFails(await readOnly(['delete', '7']), lacks);
    assertFails(await readOnly(['create', '--id', '9', '--name', 'x']), lacks);
    assertFails(await readOnly(['import', '-'], '{"id":9,"name":"x"}\n'), `nothing imported: ${lacks}`);
    assert.equal((await readOnly(['get', '7'])).code, 0, 'a reader reads');
  });

  test('an unreachable service, a bad URL, a missing token: one line naming the URL or what to set', async () => {
    const port = await freePort();
    assertFails(
      await plants(['list', '--url', `http://127.0.0.1:${port}`]),
      `cannot reach the service at http://127.0.0.1:${port}: connection refused (ECONNREFUSED)`,
    );
    assertFails(
      await plants(['get', '1', '--url', 'http://no-such-host.invalid:8080']),
      /^plant-store: cannot reach the service at http:\/\/no-such-host\.invalid:8080: .*\((ENOTFOUND|EAI_AGAIN)\)\n$/,
    );
    assertFails(
      await plants(['list', '--url', 'localhost 8080']),
      /--url must be the service's http\(s\) URL, such as http:\/\/127\.0\.0\.1:8080, got "localhost 8080"; see "plant-store plants list --help"/,
    );
    assertFails(await plants(['list', '--url', 'ftp://example.org']), /--url must be an http or https URL, got "ftp:\/\/example\.org"/);
    const credentials = await plants(['list', '--url', 'http://me:secret-word@127.0.0.1:8080']);
    assertFails(credentials, /--url must not hold credentials: the token goes in PLANT_STORE_TOKEN/);
    assert.ok(!credentials.stderr.includes('secret-word'));
    assertFails(await plants(['list', '--url', `${server.url}/?x=1`]), /without a query or fragment/);
    assertFails(await plants(['list'], { PLANT_STORE_URL: 'nonsense' }), /PLANT_STORE_URL must be the service's http\(s\) URL/);
    const tokenless = await run([CLI_JS, 'plants', 'delete', '1', '--url', server.url], { cwd: away, env: {} });
    assertFails(tokenless, /--url needs a token: set the environment variable PLANT_STORE_TOKEN to a token of the service \(with plants:write\)/);
    // Not the service at all: a page of another program, in words.
    assertFails(await plants(['list', '--url', `${server.url}/docs`]), /^plant-store: no such resource: GET \/docs\/plants\n$/);
  });

  test('a write whose answer is lost says the service was reached and that whether it was done is not known', async () => {
    const proxy = await lossyProxy(server.port, () => true);
    const created = await plants(['create', '--id', '31', '--name', 'Lost', '--url', proxy.url]);
    assertFails(
      created,
      new RegExp(
        `^plant-store: no answer from the service at ${proxy.url}: .*\\((UND_ERR_SOCKET|ECONNRESET|EPIPE)\\); whether the POST /plants was done there is not known: read what it would change before sending it again\n$`,
      ),
    );
    // It was done: the answer alone was lost.
    assert.equal((await request(`${server.url}/plants/31`, { token: TOKEN })).status, 200);
    const deleted = await plants(['delete', '31', '--url', proxy.url]);
    assertFails(deleted, /no answer from the service at .*; whether the DELETE \/plants\/31 was done there is not known/);
    // A read that loses its answer says so too, with nothing more to know.
    assertFails(await plants(['get', '31', '--url', proxy.url]), /^plant-store: no answer from the service at \S+: [^;]*\n$/);
  });
});

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A stand-in for the service: records each request, answers what `answer` says. */
async function standIn(
  answer: (request: Received) => { status: number; headers?: Record<string, string>; body?: string },
): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const request = { method: req.method!, url: req.url!, headers: req.headers, body };
      received.push(request);
      const { status, headers = {}, body: text = '' } = answer(request);
      res.writeHead(status, headers).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

describe('what the CLI sends, and what it makes of answers (a stand-in service)', async () => {
  const away = tempDir(after);
  const { url, received } = await standIn(({ method, url: path }) => {
    if (method === 'POST' && path === '/plants')
      return {
        status: 200,
        headers: { ...JSON_TYPE, warning: '299 - "unknown field \\"tga\\" was ignored", 299 - "replaced the stored plant 1"' },
        body: '{"name":"Fern"}',
      };
    if (method === 'POST' && path.startsWith('/plants/import')) return { status: 200, headers: JSON_TYPE, body: '{"created":1,"replaced":0}' };
    if (path === '/plants/200') return { status: 200, headers: JSON_TYPE, body: '{"id":200,"name":' };
    if (path === '/plants/502') return { status: 502, headers: { 'content-type': 'text/html' }, body: '<html><body>Bad gateway</body></html>' };
    if (path === '/plants/503') return { status: 503, headers: JSON_TYPE, body: '{"error":503,"message":"the store is unavailable"}' };
    if (path === '/plants/429')
      return { status: 429, headers: { ...JSON_TYPE, 'retry-after': '7' }, body: '{"error":429,"message":"too many requests"}' };
    if (path === '/plants/4290')
      return {
        status: 429,
        headers: { ...JSON_TYPE, 'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMT' },
        body: '{"error":429,"message":"too many requests"}',
      };
    return { status: 404, headers: JSON_TYPE, body: '{"error":404,"message":"no plant with id 404"}' };
  });
  const plants = (args: string[], input?: string) =>
    run([CLI_JS, 'plants', ...args], { cwd: away, env: { PLANT_STORE_URL: url, PLANT_STORE_TOKEN: TOKEN }, input });

  test('create and import send Prefer: handling=strict and the token; the import its bytes as they are, typed by their format', async () => {
    const created = await plants(['create', '--id', '1', '--name', 'Fern']);
    assert.equal(created.code, 0, created.stderr);
    const create = received.at(-1)!;
    assert.equal(create.headers.prefer, 'handling=strict');
    assert.equal(create.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(create.body, '{"id":1,"name":"Fern"}');

    const csv = 'id,name,tag\r\n1,"Fern, ""old""",\r\n';
    const imported = await plants(['import', '-', '--mode', 'create-only'], csv);
    assert.equal(imported.code, 0, imported.stderr);
    const upload = received.at(-1)!;
    assert.equal(upload.url, '/plants/import?mode=create-only');
    assert.equal(upload.headers.prefer, 'handling=strict');
    assert.equal(upload.headers['content-type'], 'text/csv');
    assert.equal(upload.body, csv);
    assert.equal((await plants(['import', '-'], '{"id":1,"name":"x"}')).code, 0);
    assert.equal(received.at(-1)!.url, '/plants/import', 'replace, the default, sends no mode');
    assert.equal(received.at(-1)!.headers['content-type'], 'application/x-ndjson');
    assert.equal((await plants(['import', '-', '--lenient'], '{"id":1,"name":"x","tga":"y"}')).code, 0);
    assert.equal(received.at(-1)!.headers.prefer, 'handling=lenient', '--lenient asks for it');
  });

  test("the service's warnings are said on stderr, each on its line", async () => {
    const created = await plants(['create', '--id', '1', '--name', 'Fern', '--tag', 'x']);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stderr, `plant-store: warning: unknown field "tga" was ignored\nreplaced plant 1 at ${url}\n`);
  });

  test("an answer that is not the service's (a proxy's page, broken JSON), 5xx and 429: one line each", async () => {
    assertFails(await plants(['get', '502']), `${url} answered 502 Bad Gateway, not as the plant store does: is it the service's address?`);
    assertFails(await plants(['get', '503']), `the service at ${url} answered 503: the store is unavailable`);
    assertFails(await plants(['get', '429']), 'too many requests (retry after 7 s)');
    assertFails(await plants(['get', '4290']), 'too many requests (retry after Wed, 21 Oct 2026 07:28:00 GMT)');
    assertFails(await plants(['get', '404']), `no plant with id 404 at ${url}`);
    assertFails(
      await plants(['get', '200']),
      /^plant-store: the service at http:\/\/127\.0\.0\.1:\d+ sent an answer marked JSON that does not parse: /,
    );
  });
});
