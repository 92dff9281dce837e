import { parseJson } from '@plant-store/client/json';
import type { Client, EventType, Id } from './api.js';

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

/** A frame of the stream being read (WHATWG HTML, "Server-sent events", the parsing rules). */
interface Frame {
  id: string | undefined;
  event: string;
  data: string[];
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

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let frame: Frame = { id: undefined, event: '', data: [] };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      for (let end = buffer.search(/[\r\n]/); end !== -1; end = buffer.search(/[\r\n]/)) {
        // A CR at the very end may be the first half of CRLF: wait for the next chunk.
        if (buffer[end] === '\r' && end === buffer.length - 1) break;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
        if (line === '') {
          this.dispatch(frame);
          frame = { id: undefined, event: '', data: [] };
        } else {
          this.field(frame, line);
        }
      }
    }
  }

  private field(frame: Frame, line: string): void {
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'id') frame.id = value;
    else if (name === 'event') frame.event = value;
    else if (name === 'data') frame.data.push(value);
    else if (name === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
  }

  /** A whole frame: its id becomes the one to resume after; a plant event goes to onChange. */
  private dispatch(frame: Frame): void {
    if (frame.id !== undefined) this.lastId = frame.id;
    if (!frame.event.startsWith('plant.') || frame.data.length === 0 || frame.id === undefined) return;
    const body = parseJson(frame.data.join('\n')) as EventBody;
    this.onChange({
      id: frame.id,
      type: body.type,
      timestamp: body.timestamp,
      plantId: body.data.id,
      ...(body.data.name !== undefined && { name: body.data.name }),
      ...(body.data.tag !== undefined && { tag: body.data.tag }),
    });
  }
}
