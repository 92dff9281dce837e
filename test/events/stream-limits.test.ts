import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { streamRoomWarnings } from '../../src/config/events.js';
import { createLogger } from '../../src/logging/logger.js';
import { LogSink } from '../log-sink.js';
import { testApp, TOKEN, assertErrorShape } from '../helpers.js';
import { listen, rawStream, type RawStream } from './sse.js';
import { until } from '../toolkit.js';

/**
 * No one client holds the service through its event streams: each token and each client address holds at
 * most its share of the streams (429 with Retry-After beyond, in the Error shape), and all of them at most
 * EVENTS_MAX_STREAMS, by default half of MAX_CONNECTIONS. Runs on PostgreSQL too.
 */

/** A stream opened from `address` (TRUST_PROXY=1 believes X-Forwarded-For) with `token`. */
function open(origin: string, token: string, address: string): Promise<RawStream> {
  return rawStream(`${origin}/events`, { authorization: `Bearer ${token}`, 'x-forwarded-for': address });
}

/** A refused stream: the status, Retry-After and the Error shape's message. */
async function refusal(stream: RawStream): Promise<{ status: number; retryAfter: string | null; message: string }> {
  await stream.ended;
  const body = JSON.parse(stream.text()) as { error: number; message: string };
  assertErrorShape(body, stream.status);
  assert.equal(body.error, stream.status);
  assert.match(String(stream.headers.get('content-type')), /^application\/json/);
  return { status: stream.status, retryAfter: stream.headers.get('retry-after'), message: body.message };
}

describe('event stream slots per token and per client address', () => {
  it('refuses a token its streams beyond EVENTS_MAX_STREAMS_PER_TOKEN, from any address, with 429 and Retry-After', async () => {
    const t = await testApp(after, { config: { trustProxy: 1, eventsMaxStreams: 10, eventsMaxStreamsPerToken: 2, eventsMaxStreamsPerAddress: 10 } });
    const origin = await listen(t.app);
    const reader = await t.tokenWith('events:read');
    const held = [await open(origin, reader, '203.0.113.1'), await open(origin, reader, '203.0.113.2')];
    for (const stream of held) assert.equal(stream.status, 200);
    const refused = await refusal(await open(origin, reader, '203.0.113.3'));
    assert.equal(refused.status, 429);
    assert.equal(refused.retryAfter, '5');
    assert.match(refused.message, /this token holds 2 event streams already.*EVENTS_MAX_STREAMS_PER_TOKEN/);
    // Others are not held back by it.
    const other = await open(origin, TOKEN, '203.0.113.3');
    assert.equal(other.status, 200);
    assert.equal((await t.call('GET', '/events', { token: reader })).statusCode, 200, 'pages are not streams');
    // A stream that ends gives its slot back.
    held[0]!.abort();
    let again: RawStream | undefined;
    await until(async () => {
      again?.abort();
      again = await open(origin, reader, '203.0.113.4');
      return again.status === 200;
    }, 'the slot given back');
    for (const stream of [held[1]!, other, again!]) stream.abort();
  });

  it('a HEAD of the stream answers its head and holds no slot: the token streams after as many HEADs as it likes', async () => {
    const t = await testApp(after, { config: { trustProxy: 1, eventsMaxStreams: 2, eventsMaxStreamsPerToken: 1, eventsMaxStreamsPerAddress: 1 } });
    const origin = await listen(t.app);
    const reader = await t.tokenWith('events:read');
    for (let i = 0; i < 3; i++) {
      const head = await fetch(`${origin}/events`, { method: 'HEAD', headers: { authorization: `Bearer ${reader}`, accept: 'text/event-stream' } });
      assert.equal(head.status, 200);
      assert.match(String(head.headers.get('content-type')), /^text\/event-stream/);
      assert.equal(await head.text(), '');
    }
    // A place the feed does not hold is 410, as the stream would be.
    const gone = await t.call('HEAD', '/events?after=msg_00000000000000000000000009', { token: reader, headers: { accept: 'text/event-stream' } });
    assert.equal(gone.statusCode, 410);
    const stream = await open(origin, reader, '203.0.113.1');
    assert.equal(stream.status, 200, 'the slot is free');
    stream.abort();
  });

  it('a HEAD of the stream has the status and headers its GET would: 429 while the token holds its share, 503 while every stream is open, no Content-Length', async () => {
    const t = await testApp(after, { config: { trustProxy: 1, eventsMaxStreams: 2, eventsMaxStreamsPerToken: 1, eventsMaxStreamsPerAddress: 2 } });
    const origin = await listen(t.app);
    const [reader, other] = [await t.tokenWith('events:read'), await t.tokenWith('events:read')];
    const head = (token: string, address: string) =>
      fetch(`${origin}/events`, {
        method: 'HEAD',
        headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'x-forwarded-for': address },
      });
    const free = await head(reader, '203.0.113.1');
    assert.equal(free.status, 200);
    assert.equal(free.headers.get('content-length'), null, 'a stream has no length, nor has its head');
    const held = await open(origin, reader, '203.0.113.1');
    assert.equal(held.status, 200);
    const limited = await head(reader, '203.0.113.2');
    assert.equal(limited.status, 429, 'the token holds its share: its GET would be 429');
    assert.equal(limited.headers.get('retry-after'), '5');
    const second = await open(origin, other, '203.0.113.3');
    assert.equal(second.status, 200);
    const full = await head(TOKEN, '203.0.113.4');
    assert.equal(full.status, 503, 'every stream is open: a GET would be 503');
    assert.equal(full.headers.get('retry-after'), '5');
    for (const stream of [held, second]) stream.abort();
  });

  it("a stream refused for the token's share says nothing of the request budget, which has requests left", async () => {
    const t = await testApp(after, {
      config: { trustProxy: 1, rateLimitPerMinute: 40, eventsMaxStreams: 10, eventsMaxStreamsPerToken: 1, eventsMaxStreamsPerAddress: 10 },
    });
    const origin = await listen(t.app);
    const reader = await t.tokenWith('events:read');
    const held = await open(origin, reader, '203.0.113.1');
    assert.equal(held.status, 200);
    assert.match(String(held.headers.get('ratelimit')), /^"default";r=\d+;t=\d+$/, 'a stream opened says its budget');
    const refused = await open(origin, reader, '203.0.113.2');
    assert.equal((await refusal(refused)).status, 429);
    assert.equal(refused.headers.get('retry-after'), '5');
    for (const field of ['ratelimit', 'ratelimit-policy', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
      assert.equal(refused.headers.get(field), null, `${field} on the stream cap's 429`);
    }
    const page = await t.call('GET', '/events', { token: reader });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers.ratelimit), /^"default";r=3\d;t=\d+$/, 'the request budget still has requests left');
    held.abort();
  });

  it('refuses an address its streams beyond EVENTS_MAX_STREAMS_PER_ADDRESS, whatever the tokens; an IPv6 address counts by its /64', async () => {
    const t = await testApp(after, { config: { trustProxy: 1, eventsMaxStreams: 10, eventsMaxStreamsPerToken: 10, eventsMaxStreamsPerAddress: 2 } });
    const origin = await listen(t.app);
    const tokens = [await t.tokenWith('events:read'), await t.tokenWith('events:read'), await t.tokenWith('events:read')];
    const held = [await open(origin, tokens[0]!, '2001:db8:1:2::1'), await open(origin, tokens[1]!, '2001:db8:1:2::ffff')];
    for (const stream of held) assert.equal(stream.status, 200);
    const refused = await refusal(await open(origin, tokens[2]!, '2001:db8:1:2:abcd::9'));
    assert.equal(refused.status, 429);
    assert.equal(refused.retryAfter, '5');
    assert.match(refused.message, /this client address holds 2 event streams already.*EVENTS_MAX_STREAMS_PER_ADDRESS/);
    const elsewhere = await open(origin, tokens[2]!, '2001:db8:1:3::1');
    assert.equal(elsewhere.status, 200, 'another /64 is another address');
    for (const stream of [...held, elsewhere]) stream.abort();
  });

  it('keeps EVENTS_MAX_STREAMS for all (503) once the shares leave room', async () => {
    const t = await testApp(after, { config: { trustProxy: 1, eventsMaxStreams: 3, eventsMaxStreamsPerToken: 2, eventsMaxStreamsPerAddress: 2 } });
    const origin = await listen(t.app);
    const [a, b] = [await t.tokenWith('events:read'), await t.tokenWith('events:read')];
    const held = [await open(origin, a, '198.51.100.1'), await open(origin, a, '198.51.100.2'), await open(origin, b, '198.51.100.3')];
    for (const stream of held) assert.equal(stream.status, 200);
    const refused = await refusal(await open(origin, b, '198.51.100.4'));
    assert.equal(refused.status, 503);
    assert.match(refused.message, /EVENTS_MAX_STREAMS/);
    for (const stream of held) stream.abort();
  });
});

describe('the stream caps by default, and an operator who sets them', () => {
  it('gives streams half of MAX_CONNECTIONS, and each token and address half of the streams', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.maxConnections, 1024);
    assert.deepEqual([defaults.eventsMaxStreams, defaults.eventsMaxStreamsPerToken, defaults.eventsMaxStreamsPerAddress], [512, 256, 256]);
    const fewer = loadConfig({ MAX_CONNECTIONS: '100' });
    assert.deepEqual([fewer.eventsMaxStreams, fewer.eventsMaxStreamsPerToken, fewer.eventsMaxStreamsPerAddress], [50, 25, 25]);
    const chosen = loadConfig({ EVENTS_MAX_STREAMS: '10' });
    assert.deepEqual([chosen.eventsMaxStreamsPerToken, chosen.eventsMaxStreamsPerAddress], [5, 5]);
    const one = loadConfig({ EVENTS_MAX_STREAMS: '1' });
    assert.deepEqual([one.eventsMaxStreamsPerToken, one.eventsMaxStreamsPerAddress], [1, 1], 'never none');
    const own = loadConfig({ EVENTS_MAX_STREAMS_PER_TOKEN: '7', EVENTS_MAX_STREAMS_PER_ADDRESS: '9' });
    assert.deepEqual([own.eventsMaxStreamsPerToken, own.eventsMaxStreamsPerAddress], [7, 9]);
    assert.throws(() => loadConfig({ EVENTS_MAX_STREAMS_PER_TOKEN: '0' }), /EVENTS_MAX_STREAMS_PER_TOKEN/);
    assert.throws(() => loadConfig({ EVENTS_MAX_STREAMS_PER_ADDRESS: 'x' }), /EVENTS_MAX_STREAMS_PER_ADDRESS/);
  });

  it('starts with a cap that leaves little room for other requests, and warns', async () => {
    // The operator's choice is kept: it starts.
    const crowded = loadConfig({ EVENTS_MAX_STREAMS: '1000', MAX_CONNECTIONS: '1024' });
    assert.equal(crowded.eventsMaxStreams, 1000);
    const [warning] = streamRoomWarnings(crowded);
    assert.match(String(warning), /^EVENTS_MAX_STREAMS \(1000\) leaves 24 of MAX_CONNECTIONS \(1024\) for other requests/);
    assert.deepEqual(streamRoomWarnings(loadConfig({})), []);
    assert.deepEqual(streamRoomWarnings({ maxConnections: 1024, eventsMaxStreams: 768 }), [], 'three quarters is room enough');
    assert.equal(streamRoomWarnings({ maxConnections: 1024, eventsMaxStreams: 769 }).length, 1);
    assert.match(String(streamRoomWarnings({ maxConnections: 10, eventsMaxStreams: 50 })[0]), /leaves 0 of MAX_CONNECTIONS/);

    const sink = new LogSink();
    await testApp(after, { config: { eventsMaxStreams: 1000, maxConnections: 1024 }, logger: createLogger('info', sink) });
    const logged = sink.lines().filter((line) => String(line.msg).startsWith('EVENTS_MAX_STREAMS (1000)'));
    assert.equal(logged.length, 1, sink.text);
    assert.equal(logged[0]!.level, 40, 'a warning');
  });
});
