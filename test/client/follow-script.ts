import assert from 'node:assert/strict';
import { mock } from 'node:test';
import { createClient, followEvents, type FollowOptions, type FollowState, type ServerSentEvent } from '@plant-store/client';

/**
 * The follower's tests' scripted service (follow.test.ts): a client whose fetch gives scripted answers to
 * GET /events in turn, a follower run with every state kept on fake timers, and a wait for its promises.
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
export function scripted(answers: Answer[]) {
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
export function follow(client: ReturnType<typeof createClient>, options: Partial<FollowOptions> & { hold?: (waitMs: number) => boolean } = {}) {
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

export const event = (id: string, name: string) => `id: ${id}\nevent: plant.created\ndata: {"id":1,"name":"${name}"}\n\n`;

/** Lets the follower's promises settle (the timers are fake: nothing else moves it) until `check` holds. */
export async function waitFor(check: () => boolean): Promise<void> {
  for (let turns = 0; !check(); turns++) {
    if (turns > 10_000) throw new Error('the follower never got there');
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
