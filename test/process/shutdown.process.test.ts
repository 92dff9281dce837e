import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { rawStream } from '../events/sse.js';
import { tempDir } from '../helpers.js';
import { request, startServer } from '../process.js';
import { until } from '../toolkit.js';

/**
 * SIGTERM and SIGINT stop the server gracefully: no new connections, the request in flight finishes, idle
 * keep-alive connections and open event streams do not hold the exit up, the store is closed, the exit code
 * is 0. Here with no drain (SHUTDOWN_DRAIN_MS=0, the test servers' default); the drain a load balancer
 * follows before this stop: drain.process.test.ts.
 */

const TOKEN = 'shutdown-test-token-0123456789abcd';

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Everything the server sends on this socket until it closes the connection. */
function readUntilClosed(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.once('error', reject);
    socket.once('close', () => resolve(text));
  });
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal}: finishes the request in flight, refuses new connections, closes the store, exits 0`, async () => {
    const dir = tempDir(after);
    const env = { DATABASE_URL: `file:${join(dir, 'x.db')}`, PLANT_STORE_TOKENS: TOKEN };
    const server = await startServer(after, { env });

    // A keep-alive connection that has had its answer and sits idle: it must not hold the exit up.
    const idle = await open(server.port);
    const idleText = readUntilClosed(idle);
    idle.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n');
    await until(() => server.stdout.includes('"url":"/healthz"'), 'the idle connection to be answered', { timeoutMs: 30_000 });

    // A request in flight: its headers are in, half of its body is not. "Expect: 100-continue" makes
    // the server say when it has taken the request in (Node answers 100 as it dispatches it).
    const plant = '{"id":9223372036854775807,"name":"sent in two halves","tag":"slow"}';
    const half = Math.floor(plant.length / 2);
    const inFlight = await open(server.port);
    const answer = readUntilClosed(inFlight);
    let received = '';
    inFlight.on('data', (chunk: string) => (received += chunk));
    inFlight.write(
      `POST /plants HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(plant)}\r\nExpect: 100-continue\r\n\r\n`,
    );
    await until(() => received.startsWith('HTTP/1.1 100 Continue\r\n\r\n'), 'the server to take the request in', { timeoutMs: 30_000 });
    inFlight.write(plant.slice(0, half));

    server.signal(signal);
    await until(() => server.stdout.includes('shutting down'), 'the server to begin shutting down', { timeoutMs: 30_000 });
    await idleText;
    await assert.rejects(open(server.port), { code: 'ECONNREFUSED' }, 'new connections are refused');
    assert.ok(server.running, 'still running while a request is in flight');

    inFlight.write(plant.slice(half));
    const response = await answer;
    assert.match(response, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /, response);
    assert.ok(response.endsWith('{"name":"sent in two halves","tag":"slow"}'), response);
    assert.match(response, /\r\nconnection: close\r\n/i, 'the client is told the connection ends');

    assert.deepEqual(await server.exited, { code: 0, signal: null }, server.stdout);
    // The store was closed: SQLite checkpoints and removes its write-ahead log on a clean close.
    const wal = join(dir, 'x.db-wal');
    assert.ok(!existsSync(wal) || statSync(wal).size === 0, 'the WAL was checkpointed at close');

    // And the plant answered 200 in the middle of the shutdown is stored.
    const restarted = await startServer(after, { env });
    const stored = await request(`${restarted.url}/plants/9223372036854775807`, { token: TOKEN });
    assert.equal(stored.text, '{"id":9223372036854775807,"name":"sent in two halves","tag":"slow"}');
    assert.deepEqual(await restarted.stop(), { code: 0, signal: null });
  });
}

test('a server with nothing in flight stops at once on SIGTERM, even with idle keep-alive clients', async () => {
  const dir = tempDir(after);
  const server = await startServer(after, { env: { DATABASE_URL: `file:${join(dir, 'x.db')}`, PLANT_STORE_TOKENS: TOKEN } });
  // fetch keeps its connections alive in a pool: several idle ones stay open after these answers.
  await Promise.all(Array.from({ length: 4 }, () => request(`${server.url}/plants`, { token: TOKEN })));
  const exit = await server.stop('SIGTERM');
  assert.deepEqual(exit, { code: 0, signal: null });
  assert.ok(!server.stdout.includes('exiting anyway'), 'not stopped by the force-exit timer');
});

test('SIGTERM with event streams open: each stream gets what was written and ends cleanly, and the server exits 0 without waiting for them', async () => {
  const dir = tempDir(after);
  const server = await startServer(after, { env: { DATABASE_URL: `file:${join(dir, 'x.db')}`, PLANT_STORE_TOKENS: TOKEN } });
  const streams = await Promise.all([1, 2, 3].map(() => rawStream(`${server.url}/events`, { authorization: `Bearer ${TOKEN}` })));
  await until(() => streams.every((stream) => stream.text().startsWith('retry:')), 'the streams to start', { timeoutMs: 30_000 });
  const created = await request(`${server.url}/plants`, { method: 'POST', token: TOKEN, body: '{"id":1,"name":"before the stop"}' });
  assert.equal(created.status, 200, created.text);
  await until(() => streams.every((stream) => stream.text().includes('event: plant.created')), 'the event on every stream', { timeoutMs: 30_000 });

  // Streams never end by themselves (a heartbeat keeps each alive): the server must end them to stop.
  const started = Date.now();
  assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null }, server.stdout);
  const took = Date.now() - started;
  for (const stream of streams) assert.equal(await stream.ended, true, 'the answer ended, not broken');
  // Before the force-exit timer (10 s), as the line below also says: generous for a loaded machine.
  assert.ok(took < 10_000, `stopped in ${took} ms`);
  assert.ok(!server.stdout.includes('exiting anyway'), 'not stopped by the force-exit timer');
  assert.match(server.stdout, /"signal":"SIGTERM".*"msg":"shutting down/);
});
