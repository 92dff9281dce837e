import { EventStreamReader, type ServerSentEvent } from '@plant-store/client';
import { parseJson } from '@plant-store/client/json';
import { EVENT_TYPES, type Client, type EventType, type Id } from './api.js';

/**
 * The change feed, followed live: GET /events as Server-Sent Events, read with fetch's streaming body so
 * that the token goes in the Authorization header (EventSource could only put it in the URL). When the
 * connection drops it reconnects after the stream's `retry:` hint, sending Last-Event-ID: the id of the
 * last event it got, so nothing is missed and nothing comes twice.
 */

export interface Change {
  /** The event id (msg_…), in commit order. */
  id: string;
  type: EventType;
  timestamp: string;
  plantId: Id;
  name?: string;
  tag?: string;
}

export type FeedState =
  | { kind: 'connecting' }
  | { kind: 'live' }
  | { kind: 'reconnecting'; reason: string }
  /** For good: the token may not read the feed, or the console signed out. */
  | { kind: 'stopped'; reason: string };

interface EventBody {
  type: EventType;
  timestamp: string;
  data: { id: Id; name?: string; tag?: string };
}

const RETRY_MAX_MS = 30_000;

export class ChangeFeed {
  private lastId: string | undefined;
  private retryMs = 2000;
  private failures = 0;
  private readonly abort = new AbortController();

  constructor(
    private readonly client: Client,
    private readonly onChange: (change: Change) => void,
    private readonly onState: (state: FeedState) => void,
  ) {}

  stop(): void {
    this.abort.abort();
  }

  /** Follows the feed until stop(), reconnecting after every drop; resolves once stopped. */
  async run(): Promise<void> {
    const signal = this.abort.signal;
    this.onState({ kind: 'connecting' });
    while (!signal.aborted) {
      let reason: string;
      try {
        reason = await this.follow(signal);
      } catch (error) {
        if (signal.aborted) return;
        reason = error instanceof Error ? error.message : String(error);
      }
      if (signal.aborted) return;
      if (reason === '') return;
      this.onState({ kind: 'reconnecting', reason });
      // The hint, then longer after failures in a row, up to a cap.
      const wait = Math.min(RETRY_MAX_MS, this.retryMs * 2 ** Math.min(this.failures, 4));
      this.failures++;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
  }

  /** One connection: why it ended ('' when it must not be tried again). */
  private async follow(signal: AbortSignal): Promise<string> {
    const { response, error } = await this.client.GET('/events', {
      params: { header: this.lastId === undefined ? {} : { 'last-event-id': this.lastId } },
      headers: { accept: 'text/event-stream' },
      parseAs: 'stream',
      signal,
    });
    if (error !== undefined) {
      if (response.status === 401 || response.status === 403) {
        this.onState({ kind: 'stopped', reason: error.message });
        return '';
      }
      // 410: the last event seen is older than the feed keeps; start again from now (the gap is said).
      if (response.status === 410) this.lastId = undefined;
      const retryAfter = Number(response.headers.get('retry-after'));
      if (retryAfter > 0) this.retryMs = Math.max(this.retryMs, retryAfter * 1000);
      return error.message;
    }
    this.failures = 0;
    this.onState({ kind: 'live' });
    await this.read(response.body!);
    return 'the stream ended';
  }

  /** Reads the stream to its end (the one Server-Sent Events reader, the client package's), handing on each plant event. */
  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const stream = body.getReader();
    const reader = new EventStreamReader(this.lastId);
    for (;;) {
      const { value, done } = await stream.read();
      if (done) return;
      for (const event of reader.push(value)) this.dispatch(event);
      // The id to resume after: the last event ID as dispatched events set it ('' clears it: none sent).
      this.lastId = reader.lastEventId === '' ? undefined : reader.lastEventId;
      if (reader.retry !== undefined) this.retryMs = reader.retry;
    }
  }

  /** A plant event goes to onChange, its id the last event ID (the service gives every event one). */
  private dispatch(event: ServerSentEvent): void {
    if (!(EVENT_TYPES as readonly string[]).includes(event.type)) return;
    const body = parseJson(event.data) as EventBody;
    this.onChange({
      id: event.lastEventId,
      type: body.type,
      timestamp: body.timestamp,
      plantId: body.data.id,
      ...(body.data.name !== undefined && { name: body.data.name }),
      ...(body.data.tag !== undefined && { tag: body.data.tag }),
    });
  }
}
