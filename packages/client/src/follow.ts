import { EventStreamReader, type ServerSentEvent } from './event-stream.js';
import type { EventType } from './event-types.js';
import type { PlantStoreClient } from './types.js';

/**
 * The change feed followed: GET /events as Server-Sent Events, by the one policy the web console and the
 * CLI's `events tail --url` share (and any program may), with the token in a header where an EventSource
 * could only put it in the URL.
 *
 * - **Reconnecting**: after the stream ends, a connection fails or is lost, or the service answers 5xx, 429
 *   or 408, the follower waits and connects again, however long the service is away once it has answered.
 * - **The wait**: the stream's `retry:` hint (`retryMs` until it sends one), doubled for every attempt in a
 *   row that got no stream (up to 16 times), at most `maxRetryMs`; then taken at random between half of it
 *   and all of it, so that the clients a restart dropped together do not come back together; never less
 *   than a `Retry-After` the service sent. A stream that opens starts the doubling over.
 * - **Resuming**: each connection after the first sends `Last-Event-ID`, the id of the last event received
 *   whole (an event cut off by the drop does not count, and comes again), so nothing is missed and nothing
 *   comes twice. An empty `id:` clears it, as an EventSource does: then none is sent, and the next stream
 *   starts from now. The first connection starts after `after`, or from now; until an event has come,
 *   `after` is the id a connection after it resumes from (a stream that starts after an id sends no start
 *   frame, so a drop before its first event would otherwise lose the events of the gap).
 * - **410 Gone**: the events after the last one received are no longer in the feed (past its retention):
 *   resuming would skip them without a word, so the follower ends with a FollowError of reason `gone`. Its
 *   caller decides: the console starts again from now and says so; the CLI stops and says so.
 * - **Other refusals** (400, 401, 403, 404…): reconnecting cannot mend them: FollowError `refused`, with
 *   the service's status and message. A 200 that is not `text/event-stream` (another program at the
 *   address, a proxy's page): FollowError `not-a-stream`.
 * - **Nothing answers**: until the service has answered once, connections that fail are tried again for
 *   `giveUpMs` (5 s), then the follower ends with FollowError `unreachable`, saying why the last failed (a
 *   mistyped address, a service that is not running).
 * - An error of `onEvent` ends the follower with that error; `signal` ends it quietly (it resolves).
 */

export interface FollowOptions {
  /** The first connection's start: the events after this id (GET /events?after=). Without it, from now. */
  after?: string;
  /** Only events of these types (GET /events?type=). */
  types?: readonly EventType[];
  /** Each event as it comes, in order (the `start` frame, heartbeats and other events included): awaited before the next. */
  onEvent: (event: ServerSentEvent) => void | Promise<void>;
  /** Told as the follower connects, streams, and waits to reconnect. */
  onState?: (state: FollowState) => void;
  signal?: AbortSignal;
  /** The wait before reconnecting until the stream sends its `retry:` hint. Default 1000 ms. */
  retryMs?: number;
  /** The longest wait between attempts, Retry-After aside. Default 30 s. */
  maxRetryMs?: number;
  /** How long attempts go on while nothing has answered yet. Default 5 s; Infinity waits for ever. */
  giveUpMs?: number;
  /** A number in [0, 1) (Math.random): where in the wait's band each wait falls. */
  random?: () => number;
}

export type FollowState =
  | { kind: 'connecting' }
  /** A stream is open and read. */
  | { kind: 'live' }
  /** The last attempt ended (`reason`), the next comes after `waitMs`; `answered`: the service has answered before. */
  | { kind: 'reconnecting'; reason: string; waitMs: number; answered: boolean };

/**
 * Why a follower ended, other than being stopped: its `reason`, and a message in words: `410: <the
 * service's message>` (gone, refused), how the answer was not a stream, or why nothing answered (the last
 * failure: `fetch failed: connect ECONNREFUSED 127.0.0.1:8080`).
 */
export class FollowError extends Error {
  constructor(
    readonly reason: 'gone' | 'refused' | 'not-a-stream' | 'unreachable',
    message: string,
    /** The service's status (gone, refused, not-a-stream); undefined when nothing answered. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'FollowError';
  }
}

const DEFAULT_RETRY_MS = 1000;
const DEFAULT_MAX_RETRY_MS = 30_000;
const DEFAULT_GIVE_UP_MS = 5000;
/** Doublings of the wait at most: 16 times the hint. */
const MAX_DOUBLINGS = 4;
/** Statuses a later attempt may get past: the service is busy, restarting or overloaded. */
const TRANSIENT = (status: number) => status >= 500 || status === 429 || status === 408;

/** An error as one line, with its cause (fetch's "fetch failed" says why only there: ECONNREFUSED…). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message;
}

/** A failure of the network or of fetch itself (a TypeError, in Node and browsers alike), as opposed to a bug or a refusal of the caller's fetch. */
function isNetworkFailure(error: unknown): boolean {
  return error instanceof TypeError || (error instanceof Error && error.name === 'AbortError');
}

/** The longest a Retry-After holds the follower back: a day (a timer holds no more than 24.8 days). */
const MAX_RETRY_AFTER_MS = 86_400_000;

/** Retry-After as ms from now (RFC 9110: delay-seconds or an HTTP-date); 0 when absent or unreadable. */
function retryAfter(value: string | null): number {
  if (value === null) return 0;
  const ms = /^\s*\d+\s*$/.test(value) ? Number(value) * 1000 : Date.parse(value) - Date.now();
  return Number.isNaN(ms) ? 0 : Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Follows GET /events until `signal` aborts (resolves) or a FollowError (or onEvent's error) ends it. */
export async function followEvents(client: PlantStoreClient, options: FollowOptions): Promise<void> {
  const { signal, onState, random = Math.random } = options;
  const maxRetryMs = options.maxRetryMs ?? DEFAULT_MAX_RETRY_MS;
  const giveUpMs = options.giveUpMs ?? DEFAULT_GIVE_UP_MS;
  let retryMs = options.retryMs ?? DEFAULT_RETRY_MS;
  // The position to resume from: `after` until an event (or the start frame) says a later one, so that a
  // connection lost before the first event resumes after `after`, not from now.
  let lastId: string | undefined = options.after;
  let first = true;
  let answered = false;
  let failures = 0;
  const started = Date.now();
  onState?.({ kind: 'connecting' });
  while (!signal?.aborted) {
    let reason: string;
    let retryAfterMs = 0;
    try {
      const query = { ...(first && options.after !== undefined && { after: options.after }), ...(options.types && { type: [...options.types] }) };
      const { response, error } = await client.GET('/events', {
        params: { query, header: first || lastId === undefined ? {} : { 'last-event-id': lastId } },
        headers: { accept: 'text/event-stream' },
        parseAs: 'stream',
        signal,
      });
      answered = true;
      if (error !== undefined) {
        const said = `${response.status}: ${error.message}`;
        if (response.status === 410) throw new FollowError('gone', said, 410);
        if (!TRANSIENT(response.status)) throw new FollowError('refused', said, response.status);
        retryAfterMs = retryAfter(response.headers.get('retry-after'));
        reason = said;
      } else {
        const type = (response.headers.get('content-type') ?? '').split(';', 1)[0]!.trim().toLowerCase();
        if (type !== 'text/event-stream' || response.body === null) {
          await response.body?.cancel();
          throw new FollowError(
            'not-a-stream',
            `GET /events was answered ${response.status} (${type || 'no media type'}), where the service answers text/event-stream`,
            response.status,
          );
        }
        first = false;
        failures = 0;
        onState?.({ kind: 'live' });
        reason = await read(response.body, lastId, options.onEvent, {
          id: (id) => (lastId = id === '' ? undefined : id),
          retry: (ms) => (retryMs = ms),
        });
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (!isNetworkFailure(error)) throw error;
      reason = describe(error);
      if (!answered && Date.now() - started >= giveUpMs) throw new FollowError('unreachable', reason);
    }
    if (signal?.aborted) return;
    const band = Math.min(maxRetryMs, retryMs * 2 ** Math.min(failures, MAX_DOUBLINGS));
    let waitMs = Math.max(retryAfterMs, Math.round(band / 2 + (band / 2) * random()));
    // Until something answers, the last attempt comes when giveUpMs is up, not a whole wait after it.
    if (!answered) waitMs = Math.max(0, Math.min(waitMs, started + giveUpMs - Date.now()));
    failures++;
    onState?.({ kind: 'reconnecting', reason, waitMs, answered });
    await wait(waitMs, signal);
  }
}

/**
 * Reads one stream to its end, handing on each event whole and telling its ids (once dispatched: an event
 * cut off does not count) and retry hints; answers why it ended. An error of the stream is the connection
 * lost; one of `onEvent` is the caller's, and ends the follower.
 */
async function read(
  body: ReadableStream<Uint8Array>,
  lastId: string | undefined,
  onEvent: FollowOptions['onEvent'],
  tell: { id(id: string): void; retry(ms: number): void },
): Promise<string> {
  const stream = body.getReader();
  const reader = new EventStreamReader(lastId);
  try {
    for (;;) {
      // A failure of the stream is the connection lost, said as why the stream ended.
      const chunk = await stream.read().catch((error: unknown) => {
        if (!isNetworkFailure(error)) throw error;
        return describe(error);
      });
      if (typeof chunk === 'string') return chunk;
      if (chunk.done) return 'the service ended the stream';
      for (const event of reader.push(chunk.value)) await onEvent(event);
      tell.id(reader.lastEventId);
      if (reader.retry !== undefined) tell.retry(reader.retry);
    }
  } finally {
    await stream.cancel().catch(() => undefined);
  }
}
