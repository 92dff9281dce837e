import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Feed } from '../../src/events/feed.js';
import type { EventStream } from '../../src/events/stream.js';
import { createLogger } from '../../src/logging/logger.js';
import { FEED_START } from '../../src/store/event-store.js';
import { LogSink } from '../log-sink.js';
import { openTestStore, testApp, type TestApp } from '../helpers.js';
import { until } from '../toolkit.js';

/**
 * Retention deleting events while a consumer is reading them (its cursor was held when it started): the
 * consumer must never skip what was deleted ahead of it without being told. A stream catching up from the
 * store ends (its client reconnects with Last-Event-ID and is answered 410); a page after a deleted cursor
 * is 410. Runs on PostgreSQL too.
 */

/** One plant created: an event of its own, in a commit of its own. */
async function created(t: TestApp, id: number): Promise<void> {
  const res = await t.call('POST', '/plants', { body: `{"id":${id},"name":"plant number ${id}"}` });
  assert.equal(res.statusCode, 200, res.payload);
}

/** `count` plants imported at once: `count` events, in one commit. */
async function imported(t: TestApp, count: number): Promise<void> {
  const body = Array.from({ length: count }, (_, i) => `{"id":${i},"name":"plant number ${i}"}`).join('\n');
  const res = await t.call('POST', '/plants/import', { body, headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(res.statusCode, 200, res.payload);
}

/** Every event id of the feed, oldest first. */
async function feedIds(t: TestApp): Promise<string[]> {
  return (await t.store.events.read({ after: FEED_START, limit: 100_000 })).map((event) => event.id);
}

/**
 * Deletes every expired event but the newest (a retention of nothing; the newest must be a commit of one
 * event, as PostgreSQL keeps the newest commit whole), once the search index lets it.
 */
async function expireAll(t: TestApp): Promise<void> {
  const written = Date.now();
  await until(() => Date.now() > written, 'the clock to pass the last write');
  await until(async () => {
    await t.store.events.deleteExpired(Date.now() + 60_000);
    return (await feedIds(t)).length === 1;
  }, 'every event but the newest to be deleted');
}

const STREAM_SETTINGS = {
  maxStreams: 10,
  perToken: 10,
  perAddress: 10,
  heartbeatMs: 60_000,
  retryMs: 1000,
  pollMs: 50,
  maxBacklogBytes: 1 << 20,
};

/** The text a stream gives until it ends or has given the event `last`. */
async function readUntil(stream: EventStream, last: string): Promise<{ text: string; ended: boolean }> {
  let text = '';
  let ended = false;
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  stream.once('end', () => (ended = true));
  await until(() => ended || text.includes(`id: ${last}\n`), 'the stream to end, or to give the newest event');
  return { text, ended };
}

describe('retention while a consumer reads the change feed', () => {
  it('ends a stream catching up whose next events retention deleted, never skipping them; its reconnect is 410', async () => {
    const t = await testApp(after);
    await imported(t, 3000);
    await created(t, 3000);
    const ids = await feedIds(t);
    const feed = new Feed(t.store.events, t.store.tokens, STREAM_SETTINGS, createLogger('warn', new LogSink()));
    after(() => feed.close(0));
    const owner = { principal: { tokenId: 'static:test', scopes: ['events:read' as const], source: 'static' as const }, address: '127.0.0.1' };
    const stream = await feed.openStream(ids[0], undefined, owner);
    // Nobody reads: the stream reads a page of the store, fills its buffer and waits for its client.
    await until(() => stream.readableLength > 0 && !stream.readableFlowing, 'the first page to be read');
    await expireAll(t);
    const { text, ended } = await readUntil(stream, ids.at(-1)!);
    const sent = [...text.matchAll(/^id: (msg_\w+)$/gm)].map((m) => m[1]!);
    assert.ok(sent.length > 0 && sent.length < ids.length - 2, `${sent.length} events sent before retention ran`);
    assert.deepEqual(sent, ids.slice(1, sent.length + 1), 'the events after the cursor, none skipped');
    assert.ok(ended, 'the stream ends once the events after what it sent are gone');
    const reconnect = await t.call('GET', '/events', { headers: { accept: 'text/event-stream', 'last-event-id': sent.at(-1)! } });
    assert.equal(reconnect.statusCode, 410, reconnect.payload);
  });

  it('answers 410 for a page whose cursor retention deleted while it was read, never a page that skips', async () => {
    const store = await openTestStore(after);
    const t = await testApp(after, { store });
    for (let id = 0; id < 5; id++) await created(t, id);
    const ids = await feedIds(t);
    // Retention runs between finding the cursor and reading the page after it.
    const page = store.events.page.bind(store.events);
    let racing = true;
    store.events.page = async (options) => {
      if (racing) {
        racing = false;
        await expireAll(t);
      }
      return page(options);
    };
    const res = await t.call('GET', `/events?after=${ids[1]}&limit=2`);
    assert.equal(res.statusCode, 410, res.payload);
    assert.equal(res.json<{ code: string }>().code, 'events_expired');
  });
});
