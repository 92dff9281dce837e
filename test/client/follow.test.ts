import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { createClient, FollowError, followEvents, type FollowOptions, type FollowState, type ServerSentEvent } from '@plant-store/client';

/**
 * The change feed's follower, the client package's (packages/client/src/follow.ts), which the console and
 * the CLI both use: its one policy held step by step against scripted answers of GET /events, on fake
 * timers (every wait is told, then ticked through: no test sleeps); follow-service.test.ts follows the real service.
 */

/** One scripted answer: a stream of these chunks (then its end, or a cut), a status, or a network failure. */
type Answer =
  | { stream: string[]; end?: 'close' | 'cut' | 'open'; type?: string }
  | { status: number; message: string; headers?: Record<string, string> }
  | { fail: string };

interface Asked {
  lastEventId: string | null;
  query: string;
}

/**
 * A client whose fetch gives the answers in turn (then fails the test); `asked` records each request, and
 * `cancelled` counts the bodies the follower cancelled.
 */
function scripted(answers: Answer[]) {
  const asked: Asked[] = [];
  let cancelled = 0;
  const fetch = (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    assert.equal(url.pathname, '/events');
    assert.equal(request.headers.get('accept'), 'text/event-stream');
    asked.push({ lastEventId: request.headers.get('last-event-id'), query: url.search });
    const answer = answers.shift();
    if (answer === undefined) return Promise.reject(new Error(`request ${asked.length} was not scripted`));
    if ('fail' in answer) return Promise.reject(new TypeError('fetch failed', { cause: new Error(answer.fail) }));
    if ('status' in answer) {
      const body = JSON.stringify({ error: answer.status, message: answer.message });
      return Promise.resolve(new Response(body, { status: answer.status, headers: { 'content-type': 'application/json', ...answer.headers } }));
    }
    const bytes = answer.stream.map((chunk) => new TextEncoder().encode(chunk));
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = bytes.shift();
        if (next !== undefined) return controller.enqueue(next);
        if (answer.end === 'cut') controller.error(new TypeError('terminated', { cause: new Error('other side closed') }));
        else if (answer.end !== 'open') controller.close();
        else request.signal.addEventListener('abort', () => controller.error(new DOMException('aborted', 'AbortError')));
      },
      cancel() {
        cancelled++;
      },
    });
    return Promise.resolve(new Response(body, { headers: { 'content-type': answer.type ?? 'text/event-stream; charset=utf-8' } }));
  };
  return { client: createClient({ baseUrl: 'http://service', fetch }), asked, cancelled: () => cancelled };
}

/**
 * Follows with the scripted client, every state kept; each wait to reconnect is ticked through as it is
 * told (the timers are fake), unless `hold` keeps it (the test ticks or aborts then).
 */
function follow(client: ReturnType<typeof createClient>, options: Partial<FollowOptions> & { hold?: (waitMs: number) => boolean } = {}) {
  const events: ServerSentEvent[] = [];
  const states: FollowState[] = [];
  const abort = new AbortController();
  const { hold, ...rest } = options;
  const done = followEvents(client, {
    signal: abort.signal,
    random: () => 0.5,
    onEvent: (event) => void events.push(event),
    ...rest,
    onState(state) {
      states.push(state);
      // After the follower has set its timer (this state is told just before).
      if (state.kind === 'reconnecting' && !hold?.(state.waitMs)) queueMicrotask(() => mock.timers.tick(state.waitMs));
    },
  });
  return { events, states, abort, done, waits: () => states.flatMap((s) => (s.kind === 'reconnecting' ? [s.waitMs] : [])) };
}

const event = (id: string, name: string) => `id: ${id}\nevent: plant.created\ndata: {"id":1,"name":"${name}"}\n\n`;

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

/** Lets the follower's promises settle (the timers are fake: nothing else moves it) until `check` holds. */
async function waitFor(check: () => boolean): Promise<void> {
  for (let turns = 0; !check(); turns++) {
    if (turns > 10_000) throw new Error('the follower never got there');
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
