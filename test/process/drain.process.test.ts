import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { rawStream } from '../events/sse.js';
import { tempDir, assertErrorShape } from '../helpers.js';
import { until } from '../toolkit.js';
import { parseAnswers } from '../reliability/raw-http.js';
import { serve } from './supervised.js';

/**
 * The drain a load balancer follows (SIGTERM): `/readyz` answers 503 in the Error shape for
 * SHUTDOWN_DRAIN_MS while every other request is served and new connections are still taken, every
 * answer saying Connection: close; then the listener closes, connections idle through the drain end, the
 * requests in flight finish, event streams end cleanly, and the process exits 0.
 */

const TOKEN = 'drain-test-token-0123456789abcdefghi';
const auth = { authorization: `Bearer ${TOKEN}` };
/** Long enough for every check of the drain to happen within it on a slow, shared machine (each confirms it by a 503). */
const DRAIN_MS = 15_000;

/** A connection, what it has received, and whether the server has closed it. */
async function open(port: number): Promise<{ socket: Socket; received: () => string; closed: () => boolean }> {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  let closed = false;
  socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return { socket, received: () => received, closed: () => closed };
}

test('SIGTERM: /readyz 503 for SHUTDOWN_DRAIN_MS while the rest is served, then the listener closes, idle connections end, streams end cleanly, exit 0', async () => {
  const server = await serve(after, {
    DATABASE_URL: `file:${join(tempDir(after), 'plants.db')}`,
    PLANT_STORE_TOKENS: TOKEN,
    SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
  });
  const stream = await rawStream(`${server.url}/events`, auth);
  await until(() => stream.text().startsWith('retry:'), 'the stream to start', { timeoutMs: 30_000 });
  // Two keep-alive connections, answered once each: one stays idle, the other sends again during the drain.
  const idle = await open(server.port);
  const busy = await open(server.port);
  for (const client of [idle, busy]) client.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  await until(() => [idle, busy].every((client) => client.received().includes('"status":"ok"')), 'the first answers', { timeoutMs: 30_000 });
  assert.match(idle.received(), /\r\nConnection: keep-alive\r\n/);

  server.signal('SIGTERM');
  await until(() => server.stdout().includes(`"msg":"shutting down: /readyz answers 503 for ${DRAIN_MS / 1000} s`), 'the drain to begin', {
    timeoutMs: 30_000,
  });

  // The drain: not ready, everything else served (new connections included), every answer closing its connection.
  const ready = await fetch(`${server.url}/readyz`);
  assert.equal(ready.status, 503);
  const body = (await ready.json()) as Record<string, unknown>;
  assertErrorShape(body, 503, 'stopping');
  assert.equal(body.error, 503);
  assert.equal(ready.headers.get('connection'), 'close');
  const created = await fetch(`${server.url}/plants`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: '{"id":1,"name":"made during the drain"}',
  });
  assert.equal(created.status, 200, await created.text());
  assert.equal(created.headers.get('connection'), 'close');
  await until(() => stream.text().includes('made during the drain'), 'the event on the open stream', { timeoutMs: 30_000 });

  // The keep-alive connection that sends again is answered, then closed: between requests, never under one.
  busy.socket.write('GET /plants/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ' + TOKEN + '\r\n\r\n');
  await until(() => busy.closed(), 'the busy connection to be closed after its answer', { timeoutMs: 30_000 });
  const answers = parseAnswers(busy.received());
  assert.deepEqual(
    answers.map((answer) => [answer.status, answer.headers.connection]),
    [
      [200, 'keep-alive'],
      [200, 'close'],
    ],
  );
  assert.equal(idle.closed(), false, 'the idle connection stays open while the drain lasts');
  assert.equal((await fetch(`${server.url}/readyz`)).status, 503, 'still draining when the connections were looked at');

  // After the drain: the idle connection closed without a word, the stream ended cleanly, no more connections.
  await until(() => idle.closed(), 'the idle connection to be closed after the drain', { timeoutMs: 30_000 });
  assert.equal(parseAnswers(idle.received()).length, 1, 'nothing written to the idle connection');
  assert.equal(await stream.ended, true, 'the stream ended, not broken');
  assert.match(stream.text(), /made during the drain/);
  assert.deepEqual(await server.exited, { code: 0, signal: null });
  await assert.rejects(fetch(`${server.url}/healthz`), 'the listener is closed');
  assert.ok(!server.stdout().includes('exiting anyway'), 'not cut short by SHUTDOWN_TIMEOUT_MS');
});
