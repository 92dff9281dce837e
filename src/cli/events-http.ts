import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { EVENT_TYPES, type EventType } from '../model/event-types.js';
import { EventStreamReader } from '../net/event-stream.js';
import { fetchWithinOrigin, RedirectRefused } from './api.js';
import { print, say } from './output.js';

/**
 * `events tail --url`: the change feed of a running service over HTTP, for a machine that cannot reach its
 * database. It follows GET /events as Server-Sent Events, read by the WHATWG rules (src/net/event-stream.ts,
 * the reader the console uses too), and prints each plant event's data line, which is the event as JSON.
 * When the connection drops, or the service answers 5xx (a restart, a deploy), it waits and reconnects with
 * Last-Event-ID (the stream's `retry:` hint its wait), so it misses nothing and prints nothing twice.
 */

interface HttpTail {
  /** The service's origin (and base path), e.g. http://127.0.0.1:8080 */
  url: string;
  token: string;
  after: string | undefined;
  types: ReadonlySet<EventType> | undefined;
  signal: AbortSignal;
}

/** The wait before reconnecting until the service sends its own `retry:`. */
const DEFAULT_RETRY_MS = 1000;
/**
 * How long it keeps trying an address where nothing has answered yet: a mistyped URL or a service that is
 * not running fails with a message naming it, instead of retrying forever. Once the service has answered,
 * it is waited for however long it is away (a restart, a deploy).
 */
const NEVER_ANSWERED_GIVE_UP_MS = 5000;
const PLANT_EVENTS: ReadonlySet<string> = new Set(EVENT_TYPES);

/** An answer that reconnecting cannot mend (400, 401, 403, 410…): the tail stops with its message. */
class Refused extends Error {}

async function errorMessage(response: Response): Promise<string> {
  const text = await response.text();
  try {
    return (JSON.parse(text) as { message?: string }).message ?? text;
  } catch {
    return text;
  }
}

/** An error as one line, with its cause (fetch's "fetch failed" says why only there: ECONNREFUSED…). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message;
}

export async function tailHttp(options: HttpTail): Promise<void> {
  const { signal } = options;
  const query = new URLSearchParams();
  if (options.after !== undefined) query.set('after', options.after);
  for (const type of options.types ?? []) query.append('type', type);
  const url = `${options.url.replace(/\/+$/, '')}/events${query.size > 0 ? `?${query.toString()}` : ''}`;
  let lastId: string | undefined;
  let retryMs = DEFAULT_RETRY_MS;
  let lost = false;
  let answered = false;
  const started = Date.now();
  while (!signal.aborted) {
    let wait = retryMs;
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream', authorization: `Bearer ${options.token}` };
      if (lastId !== undefined) headers['last-event-id'] = lastId;
      const response = await fetchWithinOrigin(new Request(url, { headers, signal, redirect: 'manual' }));
      answered = true;
      if (response.status >= 500 || response.status === 429) {
        wait = Math.max(wait, Number(response.headers.get('retry-after') ?? 0) * 1000);
        throw new Error(`${response.status}: ${await errorMessage(response)}`);
      }
      if (response.status !== 200 || response.body === null) throw new Refused(`GET /events: ${response.status}: ${await errorMessage(response)}`);
      // Another program's 200 (a proxy's page) is no stream of events: said, rather than read as one that never sends any.
      const type = (response.headers.get('content-type') ?? '').split(';', 1)[0]!.trim().toLowerCase();
      if (type !== 'text/event-stream') {
        await response.body.cancel();
        throw new Refused(
          `${options.url} does not answer as the plant store does (is it the service's address?): GET /events was answered 200 (${type || 'no media type'}), where the service answers text/event-stream`,
        );
      }
      if (lost) say('plant-store: reconnected');
      lost = false;
      await readStream(response.body, signal, lastId, {
        // An empty id clears the last event ID: no Last-Event-ID is sent then, as an EventSource does.
        id: (id) => (lastId = id === '' ? undefined : id),
        retry: (ms) => (retryMs = ms),
      });
      throw new Error('the service ended the stream');
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof Refused || error instanceof RedirectRefused) throw error;
      if (!answered) {
        if (Date.now() - started >= NEVER_ANSWERED_GIVE_UP_MS)
          throw new Refused(
            `nothing answers at ${url} (${describe(error)}), tried for ${NEVER_ANSWERED_GIVE_UP_MS / 1000} s: is the service running there?`,
          );
        if (!lost) say(`plant-store: cannot connect to ${url} (${describe(error)}); trying again`);
      } else if (!lost) say(`plant-store: connection lost (${describe(error)}); reconnecting`);
      lost = true;
    }
    await sleep(wait, undefined, { signal }).catch(() => undefined);
  }
}

/** Reads one stream to its end (by the one reader, src/net/event-stream.ts), printing the data of each plant event and telling its ids and retry hints. */
async function readStream(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  lastId: string | undefined,
  tell: { id: (id: string) => void; retry: (ms: number) => void },
): Promise<void> {
  const reader = new EventStreamReader(lastId);
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    let out = '';
    for (const event of reader.push(chunk)) if (PLANT_EVENTS.has(event.type)) out += `${event.data}\n`;
    // An id counts once its event was dispatched whole: the reader sets lastEventId only then.
    tell.id(reader.lastEventId);
    if (reader.retry !== undefined) tell.retry(reader.retry);
    if (out !== '' && !print(out)) await once(process.stdout, 'drain', { signal });
  }
}
