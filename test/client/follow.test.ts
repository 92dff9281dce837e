import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { FollowError } from '@plant-store/client';
import { event, follow, scripted, waitFor } from './follow-script.js';

/**
 * The change feed's follower, the client package's (packages/client/src/follow.ts), which the console and
 * the CLI both use: its one policy held step by step against scripted answers of GET /events, on fake
 * timers (every wait is told, then ticked through: no test sleeps); follow-service.test.ts follows the real service.
 */

describe('the change feed follower (@plant-store/client)', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 }));
  afterEach(() => mock.timers.reset());

  it('hands on each event in order; reconnects after the end or a cut with the id of the last event received whole', async () => {
    const { client, asked } = scripted([
      { stream: ['retry: 100\n\n', event('msg_1', 'a'), event('msg_2', 'b').slice(0, 10)] },
      { stream: [event('msg_2', 'b'), 'id: msg_3\nevent: plant.cre', 'ated\ndata: {}\n\n'], end: 'cut' },
      { stream: ['id\ndata: cleared\n\n'] },
      { stream: [], end: 'open' },
    ]);
    const followed = follow(client, { after: 'msg_0', types: ['plant.created', 'plant.deleted'] });
    await waitFor(() => asked.length === 4);
    followed.abort.abort();
    await followed.done;
    assert.deepEqual(
      followed.events.map((e) => [e.lastEventId, e.type, e.data]),
      [
        ['msg_1', 'plant.created', '{"id":1,"name":"a"}'],
        ['msg_2', 'plant.created', '{"id":1,"name":"b"}'],
        ['msg_3', 'plant.created', '{}'],
        ['', 'message', 'cleared'],
      ],
    );
    assert.deepEqual(asked, [
      // The first connection starts after `after`; the others resume with Last-Event-ID (msg_2, half sent, came again).
      { lastEventId: null, query: '?after=msg_0&type=plant.created&type=plant.deleted' },
      { lastEventId: 'msg_1', query: '?type=plant.created&type=plant.deleted' },
      { lastEventId: 'msg_3', query: '?type=plant.created&type=plant.deleted' },
      // An empty id cleared it: none is sent, as an EventSource does.
      { lastEventId: null, query: '?type=plant.created&type=plant.deleted' },
    ]);
    assert.deepEqual(
      followed.states.map((s) => (s.kind === 'reconnecting' ? `${s.kind}: ${s.reason}` : s.kind)),
      [
        'connecting',
        'live',
        'reconnecting: the service ended the stream',
        'live',
        'reconnecting: terminated: other side closed',
        'live',
        'reconnecting: the service ended the stream',
        'live',
      ],
    );
    // The retry: hint (100 ms), the stream opening each time: no doubling; the random point 0.5 of [50, 100].
    assert.deepEqual(followed.waits(), [75, 75, 75]);
  });

  it('resumes after `after` when the stream it started is lost before its first event, never from now', async () => {
    const { client, asked } = scripted([
      { fail: 'connect ECONNREFUSED' },
      // A stream that starts after an id sends no start frame: the first event is the first id it tells.
      { stream: [': heartbeat\n\n'], end: 'cut' },
      { stream: [] },
      { stream: [event('msg_1', 'a')] },
      { stream: [], end: 'open' },
    ]);
    const followed = follow(client, { after: 'msg_0' });
    await waitFor(() => asked.length === 5);
    followed.abort.abort();
    await followed.done;
    assert.deepEqual(asked, [
      { lastEventId: null, query: '?after=msg_0' },
      // No stream opened: the first connection is tried again as it was.
      { lastEventId: null, query: '?after=msg_0' },
      { lastEventId: 'msg_0', query: '' },
      { lastEventId: 'msg_0', query: '' },
      { lastEventId: 'msg_1', query: '' },
    ]);
    assert.deepEqual(
      followed.events.map((e) => e.lastEventId),
      ['msg_1'],
    );
  });

  it('backs off: the wait doubles for each attempt that gets no stream, up to 16 times and the cap; Retry-After raises it; a stream starts over', async () => {
    const busy = { status: 503, message: 'overloaded' };
    const { client } = scripted([
      busy,
      { fail: 'connect ECONNREFUSED 127.0.0.1:8080' },
      { status: 429, message: 'too many streams', headers: { 'retry-after': '9' } },
      busy,
      busy,
      busy,
      busy,
      { stream: [] },
      { status: 408, message: 'slow' },
      { stream: [], end: 'open' },
    ]);
    const followed = follow(client, { retryMs: 1000, maxRetryMs: 12_000 });
    await waitFor(() => followed.states.filter((s) => s.kind === 'live').length === 2);
    followed.abort.abort();
    await followed.done;
    // 1 s doubled (2, 4, 8 s), the cap (12 s), then the ends of the band taken at 0.5: 0.75 of each; Retry-After: 9 s.
    assert.deepEqual(followed.waits(), [750, 1500, 9000, 6000, 9000, 9000, 9000, 750, 1500]);
    const reasons = followed.states.flatMap((s) => (s.kind === 'reconnecting' ? [s.reason] : []));
    assert.deepEqual(reasons.slice(0, 3), ['503: overloaded', 'fetch failed: connect ECONNREFUSED 127.0.0.1:8080', '429: too many streams']);
  });

  it('reads a Retry-After given as an HTTP-date, as seconds are read; one it cannot read is none', async () => {
    const { client } = scripted([
      { status: 503, message: 'restarting', headers: { 'retry-after': new Date(20_000).toUTCString() } },
      { status: 503, message: 'restarting', headers: { 'retry-after': 'soon' } },
      { stream: [], end: 'open' },
    ]);
    const followed = follow(client, { retryMs: 1000 });
    await waitFor(() => followed.states.at(-1)?.kind === 'live');
    followed.abort.abort();
    await followed.done;
    // At 0 ms, a date 20 s on: 20 s; then the band's (2 s at 0.5: 1.5 s), the unreadable header left aside.
    assert.deepEqual(followed.waits(), [20_000, 1500]);
  });

  it('jitters each wait within its band, between half of it and all of it', async () => {
    for (const [random, expected] of [
      [0, 500],
      [0.999, 1000],
    ] as const) {
      const { client } = scripted([
        { status: 503, message: 'busy' },
        { stream: [], end: 'open' },
      ]);
      const followed = follow(client, { retryMs: 1000, random: () => random });
      await waitFor(() => followed.states.at(-1)?.kind === 'live');
      followed.abort.abort();
      await followed.done;
      assert.deepEqual(followed.waits(), [expected]);
    }
  });

  it('ends with FollowError gone on a 410 (the events after the last one seen are past retention), asking nothing more', async () => {
    const { client, asked } = scripted([{ stream: [event('msg_1', 'a')] }, { status: 410, message: 'event msg_1 is no longer in the feed' }]);
    const followed = follow(client);
    await assert.rejects(followed.done, (error: unknown) => {
      assert.ok(error instanceof FollowError);
      assert.deepEqual([error.reason, error.status, error.message], ['gone', 410, '410: event msg_1 is no longer in the feed']);
      return true;
    });
    assert.equal(asked.length, 2);
    assert.equal(asked[1]!.lastEventId, 'msg_1');
  });

  it('ends with FollowError refused on what reconnecting cannot mend (400, 401, 403, 404), at once', async () => {
    for (const status of [400, 401, 403, 404]) {
      const { client, asked } = scripted([{ status, message: `refused ${status}` }]);
      const followed = follow(client);
      await assert.rejects(followed.done, (error: unknown) => error instanceof FollowError && error.reason === 'refused' && error.status === status);
      assert.equal(asked.length, 1);
      assert.deepEqual(followed.waits(), []);
    }
  });

  it('ends with FollowError not-a-stream on a 200 of another media type (another program), its body cancelled', async () => {
    const { client, cancelled } = scripted([{ stream: ['<h1>Welcome</h1>'], type: 'text/html' }]);
    const followed = follow(client);
    await assert.rejects(
      followed.done,
      (error: unknown) =>
        error instanceof FollowError &&
        error.reason === 'not-a-stream' &&
        error.message === 'GET /events was answered 200 (text/html), where the service answers text/event-stream',
    );
    assert.equal(cancelled(), 1);
    assert.deepEqual(followed.events, []);
  });

  it('gives up on an address where nothing ever answered after giveUpMs, saying why; waits as long as it takes once something did', async () => {
    const refused = { fail: 'connect ECONNREFUSED 127.0.0.1:9' };
    const never = scripted([refused, refused, refused, refused, refused]);
    const followed = follow(never.client, { retryMs: 1000, giveUpMs: 5000 });
    await assert.rejects(followed.done, (error: unknown) => {
      assert.ok(error instanceof FollowError);
      assert.deepEqual([error.reason, error.status, error.message], ['unreachable', undefined, 'fetch failed: connect ECONNREFUSED 127.0.0.1:9']);
      return true;
    });
    // 0.75 + 1.5 s waited, then the last wait cut to end at 5 s (not 3 s, to 5.25 s): the fourth failure ends it.
    assert.deepEqual(followed.waits(), [750, 1500, 2750]);
    assert.equal(never.asked.length, 4);
    assert.ok(followed.states.every((s) => s.kind !== 'reconnecting' || !s.answered));

    // Once the service has answered (a 503), its absence is waited out however long it lasts.
    const away = scripted([{ status: 503, message: 'restarting' }, ...Array.from({ length: 8 }, () => refused), { stream: [], end: 'open' }]);
    const patient = follow(away.client, { retryMs: 1000, giveUpMs: 5000 });
    await waitFor(() => patient.states.at(-1)?.kind === 'live');
    patient.abort.abort();
    await patient.done;
    assert.equal(away.asked.length, 10);
    assert.ok(Date.now() > 60_000, `${Date.now()} ms waited`);
    assert.ok(patient.states.every((s) => s.kind !== 'reconnecting' || s.answered));
  });

  it('resolves when stopped, while waiting to reconnect or while reading, and asks nothing after', async () => {
    const waiting = scripted([{ status: 503, message: 'busy' }]);
    const held = follow(waiting.client, { hold: () => true });
    await waitFor(() => held.waits().length === 1);
    held.abort.abort();
    await held.done;
    mock.timers.tick(60_000);
    assert.equal(waiting.asked.length, 1);

    const reading = scripted([{ stream: [event('msg_1', 'a')], end: 'open' }]);
    const open = follow(reading.client);
    await waitFor(() => open.events.length === 1);
    open.abort.abort();
    await open.done;
    assert.deepEqual(open.waits(), []);
    assert.equal(reading.asked.length, 1);
  });

  it("ends with onEvent's own error, the stream cancelled: the caller's failure is not a lost connection", async () => {
    const { client, asked, cancelled } = scripted([{ stream: [event('msg_1', 'a'), event('msg_2', 'b')], end: 'open' }]);
    const followed = follow(client, {
      onEvent: () => {
        throw new Error('stdout closed');
      },
    });
    await assert.rejects(followed.done, /stdout closed/);
    assert.equal(asked.length, 1);
    assert.equal(cancelled(), 1);
  });
});
