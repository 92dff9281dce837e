import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import { testApp, TOKEN } from '../helpers.js';
import { exchange, request, type RawAnswer } from './raw-http.js';
import { until } from '../toolkit.js';

/**
 * Slow and abusive clients on a real listening server, with short timeouts so that the tests are quick:
 * headers or a body that trickle in are cut off, idle connections are closed, and connections beyond
 * the cap are refused. The clients here would go on for far longer than the timeouts (a whole minute);
 * each test only asserts that the server, not the client, ended the connection.
 */
const LIMITS = { headersTimeoutMs: 600, requestTimeoutMs: 1500, keepAliveTimeoutMs: 600, maxConnections: 8 };
const TRICKLE_GAP_MS = 100;
/** How long each abusive client would go on: far beyond every timeout above. */
const CLIENT_PATIENCE_MS = 60_000;

function trickle(text: string): string[] {
  return [...text];
}

function assertTimeoutAnswer(answers: RawAnswer[]): void {
  // An answer, if the server could write one, is the 408 in the Error shape.
  for (const answer of answers) {
    assert.equal(answer.status, 408, answer.body);
    assert.deepEqual(JSON.parse(answer.body), { error: 408, message: 'the request was not received in time', code: 'request_timeout' });
  }
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
  });
}

describe('slow and abusive clients', async () => {
  const t = await testApp(after, { config: LIMITS });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (t.app.server.address() as { port: number }).port;
  const connections = () => new Promise<number>((resolve) => t.app.server.getConnections((_e, n) => resolve(n)));

  test('headers that trickle in are cut off', async () => {
    const head = `GET /plants HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKEN}\r\n${'x-slow: y\r\n'.repeat(60)}\r\n`;
    const result = await exchange(port, trickle(head), { gapMs: TRICKLE_GAP_MS, end: false, waitMs: CLIENT_PATIENCE_MS });
    assert.ok(result.closedByServer, 'the server closed the connection');
    assertTimeoutAnswer(result.answers);
  });

  test('a body that trickles in is cut off, and nothing of it is stored', async () => {
    const body = `{"id":4242,"name":"${'s'.repeat(600)}"}`;
    const head = request('POST', '/plants', {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      'content-length': String(body.length),
    });
    const result = await exchange(port, [head, ...trickle(body)], { gapMs: TRICKLE_GAP_MS, end: false, waitMs: CLIENT_PATIENCE_MS });
    assert.ok(result.closedByServer, 'the server closed the connection');
    assertTimeoutAnswer(result.answers);
    assert.equal(await t.store.plants.get(4242), undefined);
  });

  test('a connection that sends nothing is closed', async () => {
    const result = await exchange(port, [], { end: false, waitMs: CLIENT_PATIENCE_MS });
    assert.ok(result.closedByServer);
  });

  test('an idle keep-alive connection is closed after its answer', async () => {
    const result = await exchange(port, [request('GET', '/healthz', {})], { end: false, waitMs: CLIENT_PATIENCE_MS });
    assert.ok(result.closedByServer);
    assert.deepEqual(
      result.answers.map((a) => a.status),
      [200],
    );
  });

  test('connections beyond the cap are refused at once; the cap frees as connections close', async () => {
    await until(async () => (await connections()) === 0, 'no connection left from earlier tests');
    const held: Socket[] = [];
    after(() => held.forEach((s) => s.destroy()));
    // Idle connections are closed by the server after the headers timeout; keep them busy with
    // a request whose headers never end, re-opened as needed, until the extra one has been refused.
    for (let i = 0; i < LIMITS.maxConnections; i++) {
      const socket = await open(port);
      socket.on('error', () => undefined);
      socket.write('GET /healthz HTTP/1.1\r\n');
      held.push(socket);
    }
    await until(async () => (await connections()) === LIMITS.maxConnections, 'the server counts every held connection');
    const extra = await exchange(port, [request('GET', '/healthz', { connection: 'close' })], { end: false, waitMs: CLIENT_PATIENCE_MS });
    assert.ok(extra.closedByServer);
    assert.deepEqual(extra.answers, [], 'a connection beyond the cap gets no answer');
    held.forEach((s) => s.destroy());
    await until(async () => (await connections()) === 0, 'the held connections are gone');
    const later = await exchange(port, [request('GET', '/healthz', { connection: 'close' })], { waitMs: CLIENT_PATIENCE_MS });
    assert.deepEqual(
      later.answers.map((a) => a.status),
      [200],
    );
  });
});
