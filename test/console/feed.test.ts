import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { consoleModule } from './modules.js';

/**
 * The console's follower of the change feed (console/src/feed.ts, on the client package's followEvents),
 * against scripted answers of GET /events: the plant events handed on with their ids, the `retry:` hint, each
 * reconnection's Last-Event-ID, a fresh start after a 410, a stop on a refusal.
 */

interface Change {
  id: string;
  type: string;
  timestamp: string;
  plantId: number | bigint;
  name?: string;
  tag?: string;
}
type State = { kind: string; reason?: string };
interface ChangeFeed {
  run(): Promise<void>;
  stop(): void;
}
interface FeedModule {
  ChangeFeed: new (client: FakeClient, onChange: (change: Change) => void, onState: (state: State) => void) => ChangeFeed;
}

/** A stream's media type, as the service answers it. */
const SSE = { 'content-type': 'text/event-stream; charset=utf-8' };

/** One scripted answer: a stream of these chunks (then its end), or an error status. */
type Answer = { chunks: string[] } | { status: number; message: string };

interface FakeClient {
  GET(path: string, options: { params: { header: Record<string, string> }; signal: AbortSignal }): Promise<unknown>;
}

/**
 * A client whose GET gives the answers in turn, then a stream that stays open; `asked` records each request's
 * headers and `paths` its path (checked by the tests: an assertion in here would be caught by the feed).
 */
function scripted(answers: Answer[]): { client: FakeClient; asked: Array<Record<string, string>>; paths: string[]; waiting: Promise<void> } {
  const asked: Array<Record<string, string>> = [];
  const paths: string[] = [];
  let release!: () => void;
  const waiting = new Promise<void>((resolve) => (release = resolve));
  const client: FakeClient = {
    GET(path, { params, signal }) {
      paths.push(path);
      asked.push(params.header);
      const answer = answers.shift();
      if (answer === undefined) {
        release();
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            signal.addEventListener('abort', () => controller.error(new DOMException('aborted', 'AbortError')));
          },
        });
        return Promise.resolve({ response: new Response(body, { headers: SSE }), data: body });
      }
      if ('status' in answer) {
        const error = { error: answer.status, message: answer.message };
        return Promise.resolve({ response: new Response(JSON.stringify(error), { status: answer.status }), error });
      }
      const bytes = answer.chunks.map((chunk) => new TextEncoder().encode(chunk));
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = bytes.shift();
          if (next === undefined) controller.close();
          else controller.enqueue(next);
        },
      });
      return Promise.resolve({ response: new Response(body, { headers: SSE }), data: body });
    },
  };
  return { client, asked, paths, waiting };
}

const created = (id: number, name: string) => JSON.stringify({ type: 'plant.created', timestamp: '2026-01-01T00:00:00.000Z', data: { id, name } });

describe("the console's change feed follower", () => {
  let m: FeedModule;
  before(async () => {
    m = await consoleModule<FeedModule>('feed.ts');
  });

  it("hands on the plant events with their ids, and resumes after a drop with Last-Event-ID after the stream's retry hint", async () => {
    const { client, asked, paths, waiting } = scripted([
      // The stream cut in the middle of lines and of a CRLF; a `start` frame, a heartbeat, an event of another type.
      {
        chunks: [
          'retry: 1\r\n\r\nid: msg_0\r\nevent: start\r\ndata:\r',
          '\n\r\n: hb\r\n\r\nid: msg_1\r\nevent: plant.cre',
          `ated\r\ndata: ${created(1, 'Fern')}\r\n\r\nid: msg_x\nevent: other\ndata: {}\n\n`,
        ],
      },
      { chunks: [`id: msg_2\nevent: plant.created\ndata: ${created(2, 'Ivy')}\n\n`, 'id: msg_3\nevent: plant.created\ndata: {"type":"plant.cre'] },
      { status: 503, message: 'overloaded' },
      { chunks: [`id: msg_3\nevent: plant.created\ndata: ${created(3, 'Aloe')}\n\n`] },
    ]);
    const changes: Change[] = [];
    const states: string[] = [];
    const feed = new m.ChangeFeed(
      client,
      (change) => changes.push(change),
      (state) => states.push(state.kind),
    );
    const running = feed.run();
    await waiting;
    feed.stop();
    await running;
    assert.deepEqual(
      changes.map(({ id, type, plantId, name }) => [id, type, plantId, name]),
      [
        ['msg_1', 'plant.created', 1, 'Fern'],
        ['msg_2', 'plant.created', 2, 'Ivy'],
        ['msg_3', 'plant.created', 3, 'Aloe'],
      ],
    );
    // The half-sent event of the second stream never counted: the third connection asks after msg_2.
    assert.deepEqual(asked, [
      {},
      { 'last-event-id': 'msg_x' },
      { 'last-event-id': 'msg_2' },
      { 'last-event-id': 'msg_2' },
      { 'last-event-id': 'msg_3' },
    ]);
    assert.deepEqual(states, ['connecting', 'live', 'reconnecting', 'live', 'reconnecting', 'reconnecting', 'live', 'reconnecting', 'live']);
    assert.deepEqual(paths, ['/events', '/events', '/events', '/events', '/events']);
  });

  it('sends no Last-Event-ID once the stream cleared it (an empty id), and starts over after 410', async () => {
    const { client, asked, paths, waiting } = scripted([
      { chunks: ['retry: 1\nid: msg_1\nevent: plant.created\ndata: ' + created(1, 'a') + '\n\nid\ndata: x\n\n'] },
      { chunks: ['retry: 1\nid: msg_9\n\n'] },
      { status: 410, message: 'msg_9 is no longer in the feed' },
    ]);
    const feed = new m.ChangeFeed(
      client,
      () => undefined,
      () => undefined,
    );
    const running = feed.run();
    await waiting;
    feed.stop();
    await running;
    assert.deepEqual(asked, [{}, {}, { 'last-event-id': 'msg_9' }, {}]);
    assert.deepEqual(paths, ['/events', '/events', '/events', '/events']);
  });

  it('stops for good when the token may not read the feed', async () => {
    const { client, asked, paths } = scripted([{ status: 403, message: 'this token lacks the scope events:read' }]);
    const states: State[] = [];
    await new m.ChangeFeed(
      client,
      () => undefined,
      (state) => states.push(state),
    ).run();
    assert.deepEqual(states, [{ kind: 'connecting' }, { kind: 'stopped', reason: 'this token lacks the scope events:read' }]);
    assert.equal(asked.length, 1);
    assert.deepEqual(paths, ['/events']);
  });
});
