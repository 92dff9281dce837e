import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { HttpError } from '../http/errors.js';
import { comparePositions, FEED_START, FEED_START_ID, type EventStore, type FeedEvent, type FeedPosition } from '../store/event-store.js';
import type { EventType } from '../model/events.js';
import { preamble } from './frames.js';
import { CATCH_UP_PAGE, EventStream, framesOf, type StreamSource } from './stream.js';
import { CredentialWatch } from './credentials.js';
import { StreamSlots, type SlotLimits, type StreamOwner } from './slots.js';
import type { TokenStore } from '../store/store.js';

export interface FeedSettings extends SlotLimits {
  /** EVENTS_HEARTBEAT_MS */
  heartbeatMs: number;
  /** EVENTS_RETRY_MS */
  retryMs: number;
  /** EVENTS_POLL_MS */
  pollMs: number;
  /** EVENTS_MAX_BACKLOG_BYTES */
  maxBacklogBytes: number;
}

/** Told of the streams (metrics): how many are open, and events written into them. */
export interface FeedObserver {
  streams(open: number): void;
  sent(events: number): void;
}

/** Events the feed reads from the store at a time. */
const PAGE = 1000;
/** The newest events the feed keeps in memory: a stream that resumes within them joins without reading the store. */
const RECENT = 1024;
/**
 * The least time between two reads of new events: under a write load every commit wakes the feed, and each
 * read costs one socket write per stream, so commits that land within this time of the last read are read
 * (and sent) together. It adds at most this much to an event's lag.
 */
const COALESCE_MS = 10;

/** The answer to a cursor the feed does not hold: the client must resynchronise. */
export function gone(id: string): HttpError {
  return new HttpError(
    410,
    `event ${id} is no longer in the feed (older than EVENTS_RETENTION_DAYS, or never an event): ` +
      'resynchronise from GET /plants, then follow the feed from its newest event',
  );
}

/** How long a stopping server gives its streams to end cleanly before cutting them. */
const STREAM_CLOSE_GRACE_MS = 1000;

/**
 * The change feed of one process: it follows the store while streams are open and hands each new event
 * to every stream at once. One reader for all streams: it reads the store after the newest event it has
 * seen when this process commits events (at once), and every EVENTS_POLL_MS for the commits of others
 * (other instances, the CLI, other worker processes). A batch of events becomes one chunk per type filter,
 * shared by every stream with that filter, so a thousand streams cost a thousand socket writes per batch
 * and no copies. It keeps the newest events in memory, so that a stream that resumes a little way back
 * (a reconnect) joins without reading the store.
 */
export class Feed implements StreamSource {
  /** Open streams, and who holds each. */
  private readonly streams = new Map<EventStream, StreamOwner>();
  /** Streams being opened (they hold a slot, and keep the feed following). */
  private opening = 0;
  private readonly slots: StreamSlots;
  /** Ends the streams whose token is revoked or expired. */
  private readonly credentials: CredentialWatch;
  /** Following the store: resolved once `head` is known. */
  private following: Promise<void> | undefined;
  private ready = false;
  /** Changes whenever the feed stops following: reads of an earlier epoch are dropped. */
  private epoch = 0;
  /** The newest event read (FEED_START: none), and its id. */
  private head: FeedPosition = FEED_START;
  private headId: string | undefined;
  /** The newest events read, and the position they follow: they hold every event after `recentStart`. */
  private recent: FeedEvent[] = [];
  private recentStart: FeedPosition = FEED_START;
  private reading = false;
  private again = false;
  private failing = false;
  private timers: NodeJS.Timeout[] = [];
  /** When the last read of new events started (performance.now()), and the read put off until COALESCE_MS after it. */
  private lastPull = -Infinity;
  private deferred: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(
    private readonly store: EventStore,
    tokens: Pick<TokenStore, 'list'>,
    private readonly settings: FeedSettings,
    private readonly log: Pick<FastifyBaseLogger, 'warn' | 'info'>,
    private readonly observer?: FeedObserver,
  ) {
    store.onRecorded(this.wake);
    this.slots = new StreamSlots(settings);
    this.credentials = new CredentialWatch(tokens, log);
  }

  /**
   * Where the event with this id stands in the feed; 410 when the store no longer holds it (or never did).
   */
  async position(id: string): Promise<FeedPosition> {
    const known = this.recent.find((event) => event.id === id)?.position ?? (await this.store.find(id));
    if (known === undefined) throw gone(id);
    return known;
  }

  /**
   * A new stream of the events after `after` (an event id), or from now when undefined; only events of
   * `types` when given; held by `owner` until it ends, and ended when the owner's token is no longer good.
   * Refused with 429 when the owner's token or address holds its share of the streams, 503 when
   * EVENTS_MAX_STREAMS are open or the service is stopping, 410 for an id the feed does not hold.
   */
  async openStream(after: string | undefined, types: readonly EventType[] | undefined, owner: StreamOwner): Promise<EventStream> {
    if (this.stopping) throw new HttpError(503, 'the service is shutting down: reconnect', { 'retry-after': '1' });
    this.slots.take(owner);
    let opened = false;
    this.opening++;
    try {
      await this.follow();
      const cursor = after === undefined ? this.head : await this.position(after);
      if (this.stopping) throw new HttpError(503, 'the service is shutting down: reconnect', { 'retry-after': '1' });
      // Without a cursor the client learns where it starts (the newest event, or before the first), so that a
      // reconnect before any event comes resumes from there.
      const start = preamble(this.settings.retryMs, after === undefined ? (this.headId ?? FEED_START_ID) : undefined);
      const stream = new EventStream(cursor, types && new Set(types), this, this.settings.maxBacklogBytes, start);
      this.streams.set(stream, owner);
      this.credentials.watch(stream, owner.principal);
      opened = true;
      this.observer?.streams(this.streams.size);
      return stream;
    } finally {
      this.opening--;
      if (!opened) this.slots.give(owner);
      this.unfollowIfIdle();
    }
  }

  /**
   * Ends every stream cleanly (the clients reconnect, elsewhere), and destroys those still open after
   * `graceMs`. Streams never end by themselves: the app closing calls this before it waits for the requests
   * in flight (app/services.ts), or they would hold it open.
   */
  async close(graceMs = STREAM_CLOSE_GRACE_MS): Promise<void> {
    this.stopping = true;
    this.stopTimers();
    this.credentials.stop();
    if (this.streams.size === 0) return;
    const ended = [...this.streams.keys()].map((stream) => new Promise<void>((resolve) => stream.once('close', () => resolve())));
    for (const stream of this.streams.keys()) stream.end('the server is stopping: reconnect');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(ended), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    for (const stream of this.streams.keys()) stream.destroy();
  }

  read(after: FeedPosition): Promise<FeedEvent[]> {
    return this.store.read({ after, limit: CATCH_UP_PAGE });
  }

  join(stream: EventStream, cursor: FeedPosition): FeedEvent[] | undefined {
    if (!this.ready || comparePositions(cursor, this.recentStart) < 0) return undefined;
    return this.recent.filter((event) => comparePositions(event.position, cursor) > 0);
  }

  closed(stream: EventStream): void {
    const owner = this.streams.get(stream);
    if (owner === undefined) return;
    this.streams.delete(stream);
    this.slots.give(owner);
    this.credentials.unwatch(stream);
    this.observer?.streams(this.streams.size);
    this.unfollowIfIdle();
  }

  sent(count: number): void {
    this.observer?.sent(count);
  }

  /** Reads what is new: at once after this process's commits, and every EVENTS_POLL_MS. */
  private readonly wake = (): void => {
    if (!this.ready) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    if (this.deferred !== undefined) return;
    const wait = this.lastPull + COALESCE_MS - performance.now();
    if (wait > 0) {
      this.deferred = setTimeout(() => {
        this.deferred = undefined;
        this.wake();
      }, wait);
      return;
    }
    this.lastPull = performance.now();
    void this.pull();
  };

  /** Starts following the store from its newest event, once, for every stream opened meanwhile. */
  private follow(): Promise<void> {
    this.following ??= (async () => {
      const epoch = this.epoch;
      const newest = await this.store.newest();
      if (epoch !== this.epoch) return;
      this.head = this.recentStart = newest?.position ?? FEED_START;
      this.headId = newest?.id;
      this.recent = [];
      this.ready = true;
      this.timers.push(setInterval(this.wake, this.settings.pollMs).unref(), setInterval(() => this.heartbeat(), this.settings.heartbeatMs).unref());
      // Events committed while the newest was read.
      this.wake();
    })().catch((error: unknown) => {
      this.following = undefined;
      throw error;
    });
    return this.following;
  }

  /** No stream left: stop reading the store, and forget what was read (the next stream starts afresh). */
  private unfollowIfIdle(): void {
    if (this.streams.size > 0 || this.opening > 0 || this.following === undefined) return;
    this.stopTimers();
    this.epoch++;
    this.following = undefined;
    this.ready = false;
    this.reading = false;
    this.recent = [];
  }

  private stopTimers(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    clearTimeout(this.deferred);
    this.deferred = undefined;
  }

  private heartbeat(): void {
    for (const stream of this.streams.keys()) stream.check();
  }

  private async pull(): Promise<void> {
    const epoch = this.epoch;
    this.reading = true;
    this.again = false;
    try {
      for (;;) {
        const page = await this.store.read({ after: this.head, limit: PAGE });
        if (epoch !== this.epoch) return;
        if (page.length > 0) this.broadcast(page);
        if (page.length < PAGE) break;
      }
      if (this.failing) this.log.info('events: reading the store again');
      this.failing = false;
    } catch (error) {
      // The store is unavailable: the next wake-up (at most EVENTS_POLL_MS away) tries again.
      if (!this.failing) this.log.warn({ err: error }, 'events: cannot read new events from the store');
      this.failing = true;
    } finally {
      if (epoch === this.epoch) {
        this.reading = false;
        // Commits told of while this read was under way: read again (after COALESCE_MS; a failing store waits for the poll).
        if (this.again && !this.failing) this.wake();
      }
    }
  }

  /** New events, after `head`: remembered, and handed to every live stream. */
  private broadcast(page: FeedEvent[]): void {
    const before = this.head;
    this.head = page.at(-1)!.position;
    this.headId = page.at(-1)!.id;
    this.recent.push(...page);
    if (this.recent.length > RECENT) {
      const dropped = this.recent.splice(0, this.recent.length - RECENT);
      this.recentStart = dropped.at(-1)!.position;
    }
    const chunks = new Map<string, ReturnType<typeof framesOf>>();
    for (const stream of this.streams.keys()) {
      if (stream.live && comparePositions(stream.position, before) > 0) {
        // It read the store further than the feed had (it joined while the feed's read was under way).
        const { chunk, count } = framesOf(
          page.filter((event) => comparePositions(event.position, stream.position) > 0),
          stream.types,
        );
        stream.deliver(chunk, count, this.head);
        continue;
      }
      const key = stream.filterKey;
      let frames = chunks.get(key);
      if (frames === undefined) chunks.set(key, (frames = framesOf(page, stream.types)));
      stream.deliver(frames.chunk, frames.count, this.head);
    }
  }
}
