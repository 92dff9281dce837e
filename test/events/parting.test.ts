import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { testApp } from '../helpers.js';

/**
 * A stream asked of a process whose streams have ended (it is stopping, or handing over to a new worker in
 * a reload: the request came on a connection kept alive to it) is answered 200 with the retry hint and the
 * end at once, never a 503, which would make an EventSource give up: its client reconnects, on a new
 * connection (every stream's says Connection: close), from where it was.
 */
test('a stream asked while the app stops: 200, the retry hint, the end at once, Connection: close', async () => {
  const t = await testApp(after, { config: { eventsRetryMs: 1500 } });
  const live = await t.call('GET', '/events?limit=1', { headers: { accept: 'application/json' } });
  assert.equal(live.statusCode, 200);
  await t.app.endStreams();
  const parting = await t.call('GET', '/events?after=msg_00000000000000000000000000', { headers: { accept: 'text/event-stream' } });
  assert.equal(parting.statusCode, 200, parting.payload);
  assert.match(String(parting.headers['content-type']), /^text\/event-stream/);
  assert.equal(parting.headers.connection, 'close');
  assert.equal(parting.payload, 'retry: 1500\n\n: the server is stopping: reconnect\n\n');
});
