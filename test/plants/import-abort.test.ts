import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { after, test } from 'node:test';
import { createLogger } from '../../src/logging/logger.js';
import { testApp, TOKEN } from '../helpers.js';
import { LogSink } from '../log-sink.js';
import { request } from '../reliability/raw-http.js';
import { until } from '../toolkit.js';

test('a client that goes away in the middle of an import is logged at info, without a stack, and nothing is stored', async () => {
  const sink = new LogSink();
  const t = await testApp(after, { logger: createLogger('info', sink) });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (t.app.server.address() as { port: number }).port;

  for (const contentType of ['application/x-ndjson', 'application/json']) {
    sink.text = '';
    const rows = Array.from({ length: 200 }, (_, i) => `{"id":${i + 1},"name":"dropped ${i + 1}"}`);
    const sent = contentType === 'application/json' ? `[${rows.join(',')},` : `${rows.join('\n')}\n`;
    const head = request('POST', '/plants/import', {
      authorization: `Bearer ${TOKEN}`,
      'content-type': contentType,
      'content-length': String(Buffer.byteLength(sent) * 10),
    });
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const arrived = new Promise<IncomingMessage>((resolve) => t.app.server.once('request', resolve));
    const bytes = Buffer.concat([head, Buffer.from(sent)]);
    socket.write(bytes);
    // Gone in the middle: once the server has read the head and the first rows (and nothing more is coming).
    const incoming = await arrived;
    await until(() => incoming.socket.bytesRead >= bytes.length, 'the server to have read the first part');
    socket.destroy();

    const wentAway = (line: Record<string, unknown>) => line.msg === 'import: the client went away before the body ended; nothing stored';
    await until(() => sink.lines().some(wentAway), `${contentType}: a line saying the client went away`);
    const lines = sink.lines();
    const dropped = lines.find(wentAway);
    assert.ok(dropped, `${contentType}: no line says the client went away:\n${sink.text}`);
    assert.equal(dropped.level, 30, 'at info: it is the client doing, not a fault');
    assert.equal(typeof dropped.reqId, 'string');
    for (const line of lines) {
      assert.ok(Number(line.level) < 40, `${contentType}: a line at warn or above:\n${JSON.stringify(line)}`);
      assert.ok(!JSON.stringify(line).includes('"stack"'), `${contentType}: a stack in the log:\n${JSON.stringify(line)}`);
    }
    assert.equal(await t.store.plants.count(), 0, 'nothing of the import is stored');
  }
});
