import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { testApp, TOKEN } from '../helpers.js';
import { exchange, request } from '../reliability/raw-http.js';
import { sleep } from '../toolkit.js';

/**
 * Imports have their own time limit (IMPORT_TIMEOUT_MS) instead of REQUEST_TIMEOUT_MS: a large upload may
 * take longer than any other request, and still be cut off when it takes too long.
 */

/**
 * An NDJSON import body sent in pieces, one every `gapMs`, over a real socket. Connection: close, so that the
 * server closes the connection once it has answered and the exchange ends there (kept alive, it would wait
 * for its waitMs).
 */
function trickledImport(lines: number): { head: string; pieces: string[] } {
  const pieces = Array.from({ length: lines }, (_, i) => `{"id":${i + 1},"name":"slow ${i + 1}"}\n`);
  const length = pieces.reduce((n, p) => n + Buffer.byteLength(p), 0);
  const head = request('POST', '/plants/import', {
    authorization: `Bearer ${TOKEN}`,
    'content-type': 'application/x-ndjson',
    'content-length': String(length),
    connection: 'close',
  }).toString('latin1');
  return { head, pieces };
}

test('an import may take longer than REQUEST_TIMEOUT_MS, up to IMPORT_TIMEOUT_MS; another request may not', async () => {
  const t = await testApp(after, { config: { headersTimeoutMs: 500, requestTimeoutMs: 1000, importTimeoutMs: 8000 } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (t.app.server.address() as { port: number }).port;

  const { head, pieces } = trickledImport(12);
  const slow = await exchange(port, [head, ...pieces], { gapMs: 200, end: false, waitMs: 15_000 });
  assert.equal(slow.answers[0]?.status, 200, slow.raw);
  assert.deepEqual(JSON.parse(slow.answers[0].body), { created: 12, replaced: 0 });
  assert.ok(slow.elapsedMs > 2000, `the upload took ${slow.elapsedMs} ms, more than REQUEST_TIMEOUT_MS`);

  const body = '{"id":999,"name":"a plant sent slowly"}';
  const post = request('POST', '/plants', {
    authorization: `Bearer ${TOKEN}`,
    'content-type': 'application/json',
    'content-length': String(body.length),
  });
  const cut = await exchange(port, [post.toString('latin1'), ...body.match(/.{1,4}/g)!], { gapMs: 200, end: false, waitMs: 15_000 });
  assert.equal(cut.answers[0]?.status, 408, cut.raw);
  assert.equal(await t.store.plants.get(999), undefined);
});

test('an import slower than IMPORT_TIMEOUT_MS is cut off with 408, and nothing of it is stored', async () => {
  const t = await testApp(after, { config: { headersTimeoutMs: 500, requestTimeoutMs: 1000, importTimeoutMs: 1000 } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (t.app.server.address() as { port: number }).port;
  const { head, pieces } = trickledImport(30);
  const result = await exchange(port, [head, ...pieces], { gapMs: 150, end: false, waitMs: 15_000 });
  assert.ok(result.closedByServer);
  assert.equal(result.answers[0]?.status, 408, result.raw);
  assert.deepEqual(JSON.parse(result.answers[0].body), { error: 408, message: 'the request was not received in time', code: 'request_timeout' });
  // The import was aborted: nothing is stored, now or later (a window for a wrong late commit to show in).
  await sleep(300);
  assert.equal(await t.store.plants.count(), 0);
});
