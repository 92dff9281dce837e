import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { sleep, until } from '../toolkit.js';
import { holdConnection } from './held-connection.js';
import { alive, serve } from './supervised.js';

/**
 * A request still in flight as its worker hands over in a reload (process/listeners.ts, `handoverWaitMs`):
 * the old worker waits for it within the request's own limit, not only the keep-alive timeout's wait,
 * after which it stopped and gave what was in flight SHUTDOWN_TIMEOUT_MS: a bulk import still arriving
 * then (a large one takes minutes) was cut, reset, nothing stored, though a reload promises no failed request.
 */

const TOKEN = 'handover-test-token-0123456789abcdef';
const KEEP_ALIVE_TIMEOUT_MS = 2000;
const SHUTDOWN_TIMEOUT_MS = 1000;

/** One chunk of a chunked request body. */
const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
const row = (id: number) => `{"id":${id},"name":"plant ${id}"}\n`;

describe('a request in flight as its worker hands over (a reload)', () => {
  test('a bulk import still arriving past the keep-alive timeout and SHUTDOWN_TIMEOUT_MS completes, every row stored', async () => {
    const env = {
      DATABASE_URL: `file:${join(tempDir(after), 'plants.db')}`,
      PLANT_STORE_TOKENS: TOKEN,
      KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    };
    const server = await serve(after, env);
    const [old] = server.workers();
    // A first request on the connection: it is the old worker's.
    const held = await holdConnection(after, server.port);
    const { socket } = held;

    socket.write(
      `POST /plants/import HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    let id = 0;
    for (; id < 10; id++) socket.write(chunk(row(id)));
    server.signal('SIGHUP');
    await until(() => new RegExp(`"pid":${old!.pid},[^\n]*"reason":"reload"`).test(server.stdout()), 'the old worker to hand over');
    // The rest arrives slowly, for longer than the keep-alive timeout's wait and SHUTDOWN_TIMEOUT_MS together.
    const trickleMs = KEEP_ALIVE_TIMEOUT_MS + 1000 + SHUTDOWN_TIMEOUT_MS + 2000;
    for (const end = Date.now() + trickleMs; Date.now() < end; id++) {
      socket.write(chunk(row(id)));
      await sleep(200);
    }
    socket.write('0\r\n\r\n');
    await until(() => held.closed() || /"created":\d+/.test(held.received()), 'the answer to the import', { timeoutMs: 60_000 });

    assert.match(held.received(), /^HTTP\/1\.1 200 /, `the import answered; log: ${server.stdout().slice(-3000)}`);
    assert.match(held.received(), new RegExp(`"created":${id}\\b`));
    const listed = await fetch(`${server.url}/plants?limit=1000`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(((await listed.json()) as unknown[]).length, id, 'every row stored');
    // Its request answered, the old worker exits, cleanly.
    await until(() => !alive(old!.pid), 'the old worker to exit');
    await until(() => server.stdout().includes(`"msg":"worker ${old!.pid} handed over and exited"`), 'the supervisor to see it exit cleanly');
    server.signal('SIGTERM');
    assert.deepEqual(await server.exited, { code: 0, signal: null });
  });
});
