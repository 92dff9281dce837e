import { FollowError, followEvents, type ServerSentEvent } from '@plant-store/client';
import { parseJson } from '@plant-store/client/json';
import { EVENT_TYPES, type Client, type EventType, type Id } from './api.js';

/**
 * The change feed, followed live by the client package's follower (followEvents: reconnecting after the
 * `retry:` hint with backoff, resuming with Last-Event-ID, the token in the Authorization header where an
 * EventSource could only put it in the URL), by its one policy (docs/change-feed.md). The console waits
 * for the service however long it is away (it came from there), and where the follower ends on a 410 (the
 * events after the last one seen are past the feed's retention) it starts again from now, having said so.
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
  /** The tab is hidden: its stream ended, to resume when it is shown. */
  | { kind: 'hidden' }
  /** For good: the token may not read the feed, or the console signed out. */
  | { kind: 'stopped'; reason: string };

/** How long a tab stays hidden before its stream ends: a glance at another tab keeps it. */
const HIDDEN_CLOSE_MS = 5000;

/** Whether the page is hidden (a tab in the background, a minimised window); never outside a browser. */
function hidden(): boolean {
  return typeof document !== 'undefined' && document.visibilityState === 'hidden';
}

/** Resolves when the page is shown (at once if it is), or when `signal` aborts. */
function shown(signal: AbortSignal): Promise<void> {
  if (!hidden() || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      if (hidden() && !signal.aborted) return;
      document.removeEventListener('visibilitychange', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    document.addEventListener('visibilitychange', done);
    signal.addEventListener('abort', done);
  });
}

/** Calls `then` once the page has been hidden for `ms` on end; answers the function that stops watching. */
function afterHidden(ms: number, then: () => void): () => void {
  if (typeof document === 'undefined') return () => undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const check = () => {
    clearTimeout(timer);
    timer = hidden() ? setTimeout(then, ms) : undefined;
  };
  check();
  document.addEventListener('visibilitychange', check);
  return () => {
    clearTimeout(timer);
    document.removeEventListener('visibilitychange', check);
  };
}

export interface EventBody {
  type: EventType;
  timestamp: string;
  data: { id: Id; name?: string; tag?: string };
}

export class ChangeFeed {
  private readonly abort = new AbortController();
  /** The id of the last event received: where the stream resumes after the tab was hidden. */
  private lastId: string | undefined;

  /**
   * `start`: the id of the last event had already (the stream starts after it), or undefined to start from
   * now. `onPosition`: told of each frame that moves the stream's place without a plant event (the start frame).
   */
  constructor(
    private readonly client: Client,
    private readonly onChange: (change: Change) => void,
    private readonly onState: (state: FeedState) => void,
    start?: string,
    private readonly onPosition: (id: string) => void = () => undefined,
  ) {
    this.lastId = start;
  }

  stop(): void {
    this.abort.abort();
  }

  /**
   * Follows the feed until stop(), or until the service refuses it; resolves then. A tab hidden for
   * HIDDEN_CLOSE_MS ends its stream and resumes it after the last event received when shown again: a
   * browser gives a host six HTTP/1.1 connections, and six console tabs, each holding a stream, left
   * none for anything else (a seventh tab, a search, a save waited forever).
   */
  async run(): Promise<void> {
    const { signal } = this.abort;
    // "Connecting" is said at the start and after the tab was hidden, not after a 410 (still reconnecting, as far as the page shows).
    let sayConnecting = true;
    while (!signal.aborted) {
      if (hidden()) this.onState({ kind: 'hidden' });
      await shown(signal);
      const connection = new AbortController();
      const end = () => connection.abort();
      signal.addEventListener('abort', end);
      const forget = afterHidden(HIDDEN_CLOSE_MS, end);
      try {
        const connecting = sayConnecting;
        await followEvents(this.client, {
          signal: connection.signal,
          giveUpMs: Infinity,
          ...(this.lastId !== undefined && { after: this.lastId }),
          onEvent: (event) => this.dispatch(event),
          onState: (state) => (connecting || state.kind !== 'connecting' ? this.onState(state) : undefined),
        });
        sayConnecting = true;
      } catch (error) {
        if (!(error instanceof FollowError) || error.reason !== 'gone') {
          this.onState({ kind: 'stopped', reason: error instanceof FollowError ? messageOf(error) : String(error) });
          return;
        }
        // Past the feed's retention: the page starts again from now, the gap said.
        this.lastId = undefined;
        sayConnecting = false;
        this.onState({ kind: 'reconnecting', reason: messageOf(error) });
      } finally {
        forget();
        signal.removeEventListener('abort', end);
      }
    }
  }

  /** A plant event goes to onChange, its id the last event ID (the service gives every event one). */
  private dispatch(event: ServerSentEvent): void {
    if (event.lastEventId !== '') this.lastId = event.lastEventId;
    if (!(EVENT_TYPES as readonly string[]).includes(event.type)) {
      if (event.lastEventId !== '') this.onPosition(event.lastEventId);
      return;
    }
    this.onChange(changeOf(event.lastEventId, parseJson(event.data) as EventBody));
  }
}

/** An event of the feed (a stream's frame, or an item of GET /events) as the console keeps it. */
export function changeOf(id: string, body: EventBody): Change {
  return {
    id,
    type: body.type,
    timestamp: body.timestamp,
    plantId: body.data.id,
    ...(body.data.name !== undefined && { name: body.data.name }),
    ...(body.data.tag !== undefined && { tag: body.data.tag }),
  };
}

/** The service's message alone, without the status the follower puts before it ("403: this token lacks…"). */
function messageOf(error: FollowError): string {
  return error.status === undefined ? error.message : error.message.replace(/^\d{3}: /, '');
}

/**
 * Hands on what is pushed in batches, at most one every `everyMs` (the first at once): a burst of events (an
 * import of 10,000 rows arrives as 10,000 events within a second or two) makes a few renders of the console,
 * not one each, which froze the tab for over a minute on the Changes view.
 */
export function batched<T>(deliver: (items: T[]) => void, everyMs: number): { push(item: T): void; cancel(): void } {
  let pending: T[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let last = -Infinity;
  const flush = () => {
    timer = undefined;
    last = Date.now();
    const items = pending;
    pending = [];
    deliver(items);
  };
  return {
    push(item) {
      pending.push(item);
      timer ??= setTimeout(flush, Math.max(0, last + everyMs - Date.now()));
    },
    cancel() {
      clearTimeout(timer);
      timer = undefined;
      pending = [];
    },
  };
}
