import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Metrics } from '../../src/metrics/registry.js';
import { FEED_START_ID } from '../../src/store/event-store.js';
import { newId } from '../../src/model/ids.js';
import { testApp, TOKEN, type TestApp } from '../helpers.js';
import { listen, openSource, rawStream, stalledClient } from './sse.js';
import { LARGE_DATA } from '../tier.js';
import { sleep, until } from '../toolkit.js';

/**
 * GET /events as Server-Sent Events, through a real client (the `eventsource` package, which follows the
 * WHATWG rules and reconnects with Last-Event-ID as browsers do) and by hand: live events, resuming without
 * gap or duplicate, 410, limits, heartbeats, slow readers, shutdown. Runs on PostgreSQL too.
 */

interface Listed {
  id: string;
  type: string;
}

/** Every event of the feed (after `after`), as GET /events lists them: [id, type, JSON text] in order. */
async function listAll(t: TestApp, after?: string): Promise<Array<[string, string, string]>> {
  const all: Array<[string, string, string]> = [];
  let next: string | undefined = `/events?limit=1000${after ? `&after=${after}` : ''}`;
  while (next) {
    const res = await t.call('GET', next);
    assert.equal(res.statusCode, 200, res.payload);
    // Each event's JSON as sent, split at the top level of the array.
    const texts = res.payload === '[]' ? [] : res.payload.slice(1, -1).split(/,(?=\{"id":"msg_)/);
    for (const text of texts) {
      const { id, type } = JSON.parse(text.replace(/"data":.*$/, '"data":0}')) as Listed;
      all.push([id, type, text]);
    }
    next = /^<([^>]+)>/.exec(String(res.headers.link ?? ''))?.[1];
  }
  return all;
}

async function post(t: TestApp, id: number | string, name: string): Promise<void> {
  const res = await t.call('POST', '/plants', { body: `{"id":${id},"name":${JSON.stringify(name)}}` });
  assert.equal(res.statusCode, 200, res.payload);
}

describe('GET /events (Server-Sent Events)', () => {
  it('gives a real EventSource client creates, updates and deletes as they commit, each with its type, id and JSON', async (context) => {
    const t = await testApp(after);
    await post(t, 1, 'before the stream');
    const origin = await listen(t.app);
    const client = openSource(context.after.bind(context), `${origin}/events`, TOKEN);
    await until(() => client.source.readyState === client.source.OPEN, 'the stream to open');
    await post(t, '9223372036854775807', 'Max');
    assert.equal((await t.call('PATCH', '/plants/9223372036854775807', { body: '{"tag":"big"}' })).statusCode, 200);
    assert.equal((await t.call('DELETE', '/plants/9223372036854775807')).statusCode, 204);
    await until(() => client.received.length === 3, 'three events');
    const listed = (await listAll(t)).slice(1);
    assert.deepEqual(
      client.received.map((e) => [e.id, e.type, e.data]),
      listed,
      'the events after the stream opened, as GET /events lists them, ids exact',
    );
    assert.match(client.received[0]!.data, /"data":\{"id":9223372036854775807,"name":"Max"\}/);
    assert.deepEqual(client.statuses, [200]);
  });

  it('starts after ?after= or Last-Event-ID (which wins), reads far back page by page, then goes on live', async () => {
    const t = await testApp(after);
    const imported = await t.call('POST', '/plants/import', {
      body: Array.from({ length: 1300 }, (_, i) => `{"id":${i},"name":"p${i}"}`).join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(imported.statusCode, 200, imported.payload);
    const all = await listAll(t);
    const origin = await listen(t.app);
    const fromThird = await rawStream(`${origin}/events?after=${all[2]![0]}`, { authorization: `Bearer ${TOKEN}` });
    const fromLastEventId = await rawStream(`${origin}/events?after=${all[2]![0]}`, {
      authorization: `Bearer ${TOKEN}`,
      'last-event-id': all[1299]![0],
    });
    await post(t, 5000, 'live');
    const ids = (text: string) => [...text.matchAll(/^id: (msg_\w+)$/gm)].map((m) => m[1]);
    await until(() => ids(fromThird.text()).length === 1298 && ids(fromLastEventId.text()).length === 1, 'both streams to catch up and go on live');
    const everything = await listAll(t);
    assert.deepEqual(
      ids(fromThird.text()),
      everything.slice(3).map(([id]) => id),
    );
    assert.deepEqual(ids(fromLastEventId.text()), [everything.at(-1)![0]]);
    assert.ok(fromThird.text().startsWith('retry: 2000\n\n'), 'a stream with a cursor starts with the retry hint alone');
    fromThird.abort();
    fromLastEventId.abort();
  });

  it('resumes a stream cut mid-way with Last-Event-ID: every event exactly once, in order, while writes go on', async (context) => {
    const t = await testApp(after, { config: { eventsRetryMs: 10 } });
    for (let id = 0; id < 5; id++) await post(t, id, `p${id}`);
    const before = await listAll(t);
    const origin = await listen(t.app);
    const client = openSource(context.after.bind(context), `${origin}/events?after=${before[1]![0]}`, TOKEN);
    const writes = (async () => {
      for (let i = 0; i < 150; i++) {
        const id = i % 20;
        if (i % 7 === 3) await t.call('DELETE', `/plants/${id}`);
        else if (i % 5 === 0) await t.call('PATCH', `/plants/${id}`, { body: `{"tag":"t${i}"}` });
        else await post(t, id, `w${i}`);
        if (i % 10 === 0) await sleep(5);
      }
    })();
    let cuts = 0;
    while (cuts < 5) {
      await until(() => client.received.length > cuts * 20 + 5, 'more events before the next cut');
      client.cut();
      cuts++;
    }
    await writes;
    // A last write: any event sent twice comes before it on the stream, so once it is in, all are.
    await post(t, 99, 'the last');
    const expected = (await listAll(t, before[1]![0])).map(([id, type, data]) => ({ id, type, data }));
    await until(() => client.received.some((event) => event.id === expected.at(-1)!.id), `${expected.length} events, the last write's among them`);
    assert.deepEqual(client.received, expected, 'every event once, in the order of the feed');
    assert.ok(client.connections.length >= 6, `reconnected after each cut (${client.connections.length} connections)`);
    const resumed = client.connections.slice(1).map((headers) => headers['Last-Event-ID']);
    assert.ok(
      resumed.every((id) => id !== undefined && expected.some((e) => e.id === id)),
      `each reconnect sent Last-Event-ID: ${resumed.join(', ')}`,
    );
  });

  it('answers 410 before the stream starts for an event id it does not hold, from Last-Event-ID or ?after=; and 400 for one that is no id', async (context) => {
    const t = await testApp(after);
    await post(t, 1, 'p1');
    const first = (await listAll(t))[0]![0];
    await post(t, 2, 'p2');
    await t.store.events.deleteExpired(Date.now() + 60_000);
    const origin = await listen(t.app);
    const auth = { authorization: `Bearer ${TOKEN}` };
    for (const [url, headers] of [
      [`${origin}/events`, { 'last-event-id': newId('msg') }],
      [`${origin}/events?after=${newId('msg')}`, {}],
      [`${origin}/events`, { 'last-event-id': first }],
      [`${origin}/events?after=${first}`, {}],
    ] as const) {
      const res = await fetch(url, { headers: { accept: 'text/event-stream', ...auth, ...headers } });
      assert.equal(res.status, 410, url);
      assert.match(res.headers.get('content-type')!, /^application\/json/);
      assert.match(((await res.json()) as { message: string }).message, /resynchronise from GET \/plants/);
    }
    const bad = await fetch(`${origin}/events`, { headers: { accept: 'text/event-stream', ...auth, 'last-event-id': 'msg_1' } });
    assert.equal(bad.status, 400);
    // A real client stops on 410 (EventSource never retries a non-200): the consumer must resynchronise.
    const client = openSource(context.after.bind(context), `${origin}/events?after=${first}`, TOKEN);
    await until(() => client.source.readyState === client.source.CLOSED, 'the client to give up');
    assert.deepEqual(client.statuses, [410]);
  });

  it('needs events:read before the stream starts; access_token serves clients that cannot send headers', async () => {
    const t = await testApp(after);
    const origin = await listen(t.app);
    assert.equal((await fetch(`${origin}/events`, { headers: { accept: 'text/event-stream' } })).status, 401);
    const plantsOnly = await t.tokenWith('plants:read');
    assert.equal((await fetch(`${origin}/events`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${plantsOnly}` } })).status, 403);
    const reader = await t.tokenWith('events:read');
    const stream = await rawStream(`${origin}/events?access_token=${reader}&type=plant.deleted`, {});
    assert.equal(stream.status, 200);
    assert.equal(stream.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(stream.headers.get('cache-control'), 'no-store');
    await post(t, 1, 'created: filtered out');
    assert.equal((await t.call('DELETE', '/plants/1')).statusCode, 204);
    await until(() => stream.text().includes('event: plant.deleted'), 'the delete');
    assert.ok(!stream.text().includes('plant.created'), 'only the types asked for');
    stream.abort();
  });

  it('on a feed with no event yet, starts with the id before every event, so that a reconnect before the first event misses nothing', async (context) => {
    const t = await testApp(after, { config: { eventsRetryMs: 10 } });
    const origin = await listen(t.app);
    const stream = await rawStream(`${origin}/events`, { authorization: `Bearer ${TOKEN}` });
    await until(() => stream.text().length > 0, 'the start of the stream');
    assert.equal(stream.text(), `retry: 10\nid: ${FEED_START_ID}\nevent: start\ndata:\n\n`);
    stream.abort();
    // A client cut off before the first event: it resumes from the start.
    const client = openSource(context.after.bind(context), `${origin}/events`, TOKEN);
    await until(() => client.source.readyState === client.source.OPEN, 'the client to connect');
    client.cut();
    await post(t, 1, 'while cut');
    await until(() => client.received.length === 1, 'the event made while it was cut off');
    assert.equal(client.connections[1]!['Last-Event-ID'], FEED_START_ID);
    assert.equal((await t.call('GET', `/events?after=${FEED_START_ID}`)).json<unknown[]>().length, 1, 'pages accept it too');
  });

  it('sends the retry hint and the newest id first, then a heartbeat every EVENTS_HEARTBEAT_MS', async () => {
    const t = await testApp(after, { config: { eventsRetryMs: 1234, eventsHeartbeatMs: 1000 } });
    await post(t, 1, 'p1');
    const newest = (await listAll(t))[0]![0];
    const origin = await listen(t.app);
    const stream = await rawStream(`${origin}/events`, { authorization: `Bearer ${TOKEN}` });
    await until(() => stream.text().includes(': heartbeat\n\n'), 'a heartbeat', { timeoutMs: 5000 });
    assert.ok(stream.text().startsWith(`retry: 1234\nid: ${newest}\nevent: start\ndata:\n\n`), JSON.stringify(stream.text()));
    stream.abort();
  });

  it('opens at most EVENTS_MAX_STREAMS streams (503 with Retry-After beyond); a client that hangs up frees its stream at once', async () => {
    const metrics = new Metrics();
    const t = await testApp(after, { config: { eventsMaxStreams: 2 }, metrics });
    const origin = await listen(t.app);
    const auth = { authorization: `Bearer ${TOKEN}` };
    const open = [await rawStream(`${origin}/events`, auth), await rawStream(`${origin}/events`, auth)];
    const refused = await fetch(`${origin}/events`, { headers: { accept: 'text/event-stream', ...auth } });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '5');
    assert.match(((await refused.json()) as { message: string }).message, /EVENTS_MAX_STREAMS/);
    assert.equal((await t.call('GET', '/events')).statusCode, 200, 'pages are not streams');
    assert.match(await metrics.registry.getSingleMetricAsString('plant_store_event_streams'), /plant_store_event_streams 2$/m);
    open[0]!.abort();
    await until(
      async () => /plant_store_event_streams 1$/m.test(await metrics.registry.getSingleMetricAsString('plant_store_event_streams')),
      'the slot freed',
    );
    const again = await rawStream(`${origin}/events`, auth);
    assert.equal(again.status, 200);
    again.abort();
    open[1]!.abort();
  });

  it(
    'disconnects a client that stops reading once EVENTS_MAX_BACKLOG_BYTES wait for it; one that reads, slower than a burst, gets every event',
    LARGE_DATA,
    async (context) => {
      const metrics = new Metrics();
      const t = await testApp(after, { config: { eventsMaxBacklogBytes: 64 * 1024, eventsHeartbeatMs: 1000 }, metrics });
      const origin = await listen(t.app);
      const stalled = await stalledClient(origin, '/events', TOKEN);
      const closed = new Promise<void>((resolve) => stalled.once('close', () => resolve()));
      const reader = openSource(context.after.bind(context), `${origin}/events`, TOKEN);
      const streams = async () =>
        Number(/plant_store_event_streams (\d+)$/m.exec(await metrics.registry.getSingleMetricAsString('plant_store_event_streams'))?.[1]);
      await until(async () => (await streams()) === 2, 'both streams open');
      // About 25 MB of events, more than the kernel's buffers on loopback hold.
      const rows = 60_000;
      const name = 'x'.repeat(250);
      const imported = await t.call('POST', '/plants/import', {
        body: Array.from({ length: rows }, (_, i) => `{"id":${i},"name":"${name}","tag":"${'t'.repeat(60)}"}`).join('\n'),
        headers: { 'content-type': 'application/x-ndjson' },
      });
      assert.equal(imported.statusCode, 200, imported.payload);
      await until(async () => (await streams()) === 1, 'the stalled stream dropped');
      // The server closed the connection: once the client reads what was sent before, it ends.
      let stalledText = '';
      stalled.setEncoding('utf8').on('data', (chunk: string) => (stalledText += chunk));
      stalled.resume();
      await closed;
      await until(() => reader.received.length === rows, `the reader's ${rows} events`, { timeoutMs: 60_000 });
      assert.deepEqual(reader.statuses, [200], 'the reader was never cut off');
      const feed = await listAll(t);
      assert.equal(feed.length, rows);
      assert.deepEqual(
        reader.received.map((e) => [e.id, e.type, e.data]),
        feed,
        'the reader got every event of the feed, once, in order',
      );
      // The stalled client got the start of the feed, without a gap, before it was dropped (the headers of a
      // frame cut short by the close count too: the frame was written into its stream).
      const stalledIds = [...stalledText.matchAll(/^id: (msg_\w+)\nevent: plant\.created$/gm)].map((m) => m[1]);
      assert.ok(stalledIds.length > 0 && stalledIds.length < rows, `the stalled client read ${stalledIds.length} events`);
      assert.deepEqual(
        stalledIds,
        feed.slice(0, stalledIds.length).map(([id]) => id),
      );
      // Each event written into a stream is counted once per stream: all of them for the reader, and for the
      // stalled stream at least those its client read, never all of them.
      const sent = Number(
        /^plant_store_events_sent_total (\d+)$/m.exec(await metrics.registry.getSingleMetricAsString('plant_store_events_sent_total'))?.[1],
      );
      assert.ok(
        sent >= rows + stalledIds.length && sent < 2 * rows,
        `${sent} events sent: ${rows} to the reader, ${stalledIds.length} read by the stalled client`,
      );
    },
  );

  // What the server's SIGTERM handler calls; a real SIGTERM to a server process with streams open is in
  // test/process/shutdown.process.test.ts.
  it('ends every stream cleanly when the app closes (app.close()), without waiting for them', async () => {
    const t = await testApp(after);
    const origin = await listen(t.app);
    const streams = await Promise.all([1, 2, 3].map(() => rawStream(`${origin}/events`, { authorization: `Bearer ${TOKEN}` })));
    await until(() => streams.every((s) => s.text().startsWith('retry:')), 'the streams to start');
    const started = Date.now();
    await t.app.close();
    // Nothing ends these streams but the close: one that waited for them would never return. The bound is
    // generous for a loaded machine, and tells "at once" from a close that waits out a time-out of its own.
    assert.ok(Date.now() - started < 15_000, `closed in ${Date.now() - started} ms`);
    for (const stream of streams) assert.equal(await stream.ended, true, 'the answer ended, not broken');
  });
});
