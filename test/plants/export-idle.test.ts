import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/logging/logger.js';
import { listen } from '../events/sse.js';

import { testApp, TOKEN } from '../helpers.js';
import { LogSink } from '../log-sink.js';
import { LARGE_DATA } from '../tier.js';
import { sleep, until } from '../toolkit.js';

/**
 * EXPORT_IDLE_TIMEOUT_MS on a real server: an export whose client stops reading is ended and logged, and
 * what it held (a read transaction on SQLite, a pool connection on PostgreSQL, an export slot) is given
 * back; a client that pauses for less goes on to the end. Runs on PostgreSQL too.
 */

/** Plants whose NDJSON export is far larger than what the sockets buffer on loopback (megabytes). */
const PLANTS = 40_000;
const NAME = 'n'.repeat(240);

/** Sends an export request and reads nothing of the answer until told to. */
async function stalledExport(origin: string): Promise<{ socket: Socket; readRest: () => Promise<string> }> {
  const { hostname, port } = new URL(origin);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => undefined);
  socket.pause();
  socket.write(`GET /plants?format=ndjson HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
  /** Reads what is left to the end of the connection (the server closing it): the answer's last bytes. */
  const readRest = () =>
    new Promise<string>((resolve) => {
      let tail = '';
      socket.on('data', (chunk: Buffer) => (tail = (tail + chunk.toString('latin1')).slice(-64)));
      socket.once('close', () => resolve(tail));
      socket.resume();
    });
  return { socket, readRest };
}

describe('EXPORT_IDLE_TIMEOUT_MS', () => {
  it(
    'ends and logs exports whose clients stop reading, giving back what they held; a short pause is not idleness',
    { ...LARGE_DATA, timeout: 120_000 },
    async () => {
      const sink = new LogSink();
      const t = await testApp(after, { config: { exportIdleTimeoutMs: 1000 }, logger: createLogger('info', sink) });
      const session = await t.store.plants.startImport();
      for (let i = 0; i < PLANTS; i += 5000) {
        await session.add(Array.from({ length: 5000 }, (_, j) => ({ id: i + j + 1, name: `${NAME} ${i + j + 1}` })));
      }
      await session.commit({ createOnly: false });
      const origin = await listen(t.app);

      // Four: as many as a PostgreSQL test store has pool connections, half of SQLite's export slots.
      const stalled = await Promise.all([1, 2, 3, 4].map(() => stalledExport(origin)));
      // Should an assertion fail, no client is left connected unread for the app's close to wait on.
      after(() => stalled.forEach(({ socket }) => socket.destroy()));
      const ended = () => sink.lines().filter((line) => String(line.msg).startsWith('export ended: the client took nothing for 1000 ms'));
      // Before the time-out existed these were held forever: the test's own time-out fails it.
      await until(() => ended().length === 4, 'the four exports to be ended', { timeoutMs: 100_000 });
      // Reading again, each client finds its answer cut short: the connection closes without the chunked end.
      for (const tail of await Promise.all(stalled.map(({ readRest }) => readRest()))) assert.ok(!tail.endsWith('0\r\n\r\n'), JSON.stringify(tail));
      for (const line of ended()) {
        assert.equal(line.level, 40, 'a warning');
        assert.equal(typeof line.reqId, 'string');
      }

      // What they held is back: exports and pages are served (on PostgreSQL they would wait for a connection).
      const page = await t.call('GET', '/plants?limit=1');
      assert.equal(page.statusCode, 200);
      // A client that pauses for less than the time-out gets every plant.
      const response = await fetch(`${origin}/plants?format=ndjson`, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(response.status, 200);
      const reader = response.body!.getReader();
      let bytes = 0;
      let lines = 0;
      let paused = false;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.length;
        for (const byte of value) if (byte === 10) lines++;
        if (!paused && bytes > 1024 * 1024) {
          paused = true;
          await sleep(300);
        }
      }
      assert.equal(lines, PLANTS);
      assert.equal(sink.lines().filter((line) => String(line.msg).startsWith('export ended')).length, 4, 'no other export was ended');
    },
  );
});

describe('EXPORT_IDLE_TIMEOUT_MS as a setting', () => {
  it('is 30 s by default, and checked', () => {
    assert.equal(loadConfig({}).exportIdleTimeoutMs, 30_000);
    assert.equal(loadConfig({ EXPORT_IDLE_TIMEOUT_MS: '5000' }).exportIdleTimeoutMs, 5000);
    assert.throws(() => loadConfig({ EXPORT_IDLE_TIMEOUT_MS: '50' }), /EXPORT_IDLE_TIMEOUT_MS/);
  });
});
