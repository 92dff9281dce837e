import type { FastifyBaseLogger } from 'fastify';
import { HttpError } from '../http/errors.js';
import { comparePositions, FEED_START, FEED_START_ID, type EventStore, type FeedEvent, type FeedPosition } from '../store/event-store.js';
import type { EventType } from '../model/events.js';
import { preamble } from './frames.js';
import { CATCH_UP_PAGE, EventStream, framesOf, type StreamSource } from './stream.js';
import { CredentialWatch } from './credentials.js';
import { StoreFollower } from './follower.js';
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

/** The answer to a cursor the feed does not hold: the client must resynchronise. */
export function gone(id: string): HttpError {
  return new HttpError(
    'events_expired',
    `event ${id} is no longer in the feed (older than EVENTS_RETENTION_DAYS, or never an event): ` +
      'resynchronise from GET /plants, then follow the feed from its newest event',
  );
}

/** How long a stopping server gives its streams to end cleanly before cutting them. */
const STREAM_CLOSE_GRACE_MS = 1000;

/** The last line of a stream the server ends as it stops (a comment: clients ignore it). */
const PARTING = 'the server is stopping: reconnect';

/** The last line of the streams ended because the store's feed is not the one they followed. */
const REPLACED = 'the change feed was replaced (a restored database, or a failover that lost the last commits): reconnect';

/**
 * The change feed's streams of one process: it opens them (within their slots), ends those whose token is
 * no longer good, and hands each new event to every stream at once. One reader follows the store for all
 * of them while any is open (follower.ts), keeping the newest events, so that a stream that resumes a
 * little way back (a reconnect) joins without reading the store. A batch of events becomes one chunk per
 * type filter, shared by every stream with that filter, so a thousand streams cost a thousand socket
 * writes per batch and no copies.
 */
export class Feed implements StreamSource {
  /** Open streams, and who holds each. */
  private readonly streams = new Map<EventStream, StreamOwner>();
  /** Streams being opened (they hold a slot, and keep the feed following). */
  private opening = 0;
  private readonly slots: StreamSlots;
  /** Ends the streams whose token is revoked or expired. */
  private readonly credentials: CredentialWatch;
  /** The one reader of the store, following it while streams are open (or being opened). */
  private readonly follower: StoreFollower;
  private heartbeats: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(
    private readonly store: EventStore,
    tokens: Pick<TokenStore, 'list'>,
    private readonly settings: FeedSettings,
    private readonly log: Pick<FastifyBaseLogger, 'warn' | 'info'>,
    private readonly observer?: FeedObserver,
  ) {
    this.follower = new StoreFollower(
      store,
      settings.pollMs,
      log,
      (page, before) => this.broadcast(page, before),
      () => this.feedReplaced(),
    );
    this.slots = new StreamSlots(settings);
    this.credentials = new CredentialWatch(tokens, log);
  }

  /**
   * Where the event with this id stands in the feed; 410 when the store no longer holds it (or never did).
   */
  async position(id: string): Promise<FeedPosition> {
    const known = this.follower.find(id) ?? (await this.store.find(id));
    if (known === undefined) throw gone(id);
    return known;
  }

  /**
   * A new stream of the events after `after` (an event id), or from now when undefined; only events of
   * `types` when given; held by `owner` until it ends, and ended when the owner's token is no longer good.
   * Refused with 429 when the owner's token or address holds its share of the streams, 503 when
   * EVENTS_MAX_STREAMS are open, 410 for an id the feed does not hold. Asked of a feed that is stopping (a
   * request on a connection kept alive to a process that is leaving or handing over), the stream ends at
   * once, cleanly: its client reconnects, elsewhere, from where it was (a 503 would make EventSource give up).
   * `int64`: the int64 members its frames write as strings (Prefer: int64=string).
   */
  /** Throws the 429 or 503 openStream would for this owner, opening nothing (a HEAD's answer); nothing once stopping. */
  checkStream(owner: StreamOwner): void {
    if (!this.stopping) this.slots.check(owner);
  }

  async openStream(
    after: string | undefined,
    types: readonly EventType[] | undefined,
    owner: StreamOwner,
    int64?: ReadonlySet<string>,
  ): Promise<EventStream> {
    if (this.stopping) return this.parting();
    this.slots.take(owner);
    let opened = false;
    this.opening++;
    try {
      await this.follower.follow();
      this.heartbeats ??= setInterval(() => this.heartbeat(), this.settings.heartbeatMs).unref();
      const head = this.follower.head;
      const cursor = after === undefined ? head.position : await this.position(after);
      if (this.stopping) return this.parting();
      // The feed was found replaced meanwhile, the streams ended: this one too, before it starts from the old one's place.
      if (!this.follower.active) return this.parting(REPLACED);
      // Without a cursor the client learns where it starts (the newest event, or before the first), so that a
      // reconnect before any event comes resumes from there.
      const start = preamble(this.settings.retryMs, after === undefined ? (head.id ?? FEED_START_ID) : undefined);
      const stream = new EventStream(cursor, { types: types && new Set(types), int64 }, this, this.settings.maxBacklogBytes, start);
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
    this.stopFollowing();
    this.credentials.stop();
    if (this.streams.size === 0) return;
    const ended = [...this.streams.keys()].map((stream) => new Promise<void>((resolve) => stream.once('close', () => resolve())));
    for (const stream of this.streams.keys()) stream.end(PARTING);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(ended), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    for (const stream of this.streams.keys()) stream.destroy();
  }

  /** A stream that says how long to wait before reconnecting, then ends: what a stopping feed answers. */
  private parting(reason = PARTING): EventStream {
    const stream = new EventStream(FEED_START, { types: undefined }, this, this.settings.maxBacklogBytes, preamble(this.settings.retryMs, undefined));
    stream.end(reason);
    return stream;
  }

  async read(after: FeedPosition): Promise<FeedEvent[] | undefined> {
    const page = await this.store.read({ after, limit: CATCH_UP_PAGE });
    // Asked after the read: retention deletes the oldest first, so if it has deleted nothing after the
    // cursor by now, the read had every event.
    if (await this.store.holds(after)) return page;
    // The newest events, kept in memory, may still hold every one after it (a feed quiet for longer than
    // the retention, while streams stay open).
    return this.follower.after(after)?.slice(0, CATCH_UP_PAGE);
  }

  join(_stream: EventStream, cursor: FeedPosition): FeedEvent[] | undefined {
    return this.follower.after(cursor);
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

  /** No stream left, none being opened: stop reading the store (the next stream starts afresh). */
  private unfollowIfIdle(): void {
    if (this.streams.size > 0 || this.opening > 0) return;
    this.stopFollowing();
  }

  private stopFollowing(): void {
    this.follower.stop();
    clearInterval(this.heartbeats);
    this.heartbeats = undefined;
  }

  private heartbeat(): void {
    for (const stream of this.streams.keys()) stream.check();
  }

  /**
   * The store's feed is not the one the streams followed (follower.ts, `replaced`): each ends, and its client
   * resumes after its last event, from the store as it is now (410 for an event it no longer holds).
   */
  private feedReplaced(): void {
    for (const stream of this.streams.keys()) stream.end(REPLACED);
  }

  /** New events, after `before`, handed to every live stream. */
  private broadcast(page: FeedEvent[], before: FeedPosition): void {
    const head = page.at(-1)!.position;
    const chunks = new Map<string, ReturnType<typeof framesOf>>();
    for (const stream of this.streams.keys()) {
      if (stream.live && comparePositions(stream.position, before) > 0) {
        // It read the store further than the feed had (it joined while the feed's read was under way).
        const { chunk, count } = framesOf(
          page.filter((event) => comparePositions(event.position, stream.position) > 0),
          stream.format,
        );
        stream.deliver(chunk, count, head);
        continue;
      }
      const key = stream.filterKey;
      let frames = chunks.get(key);
      if (frames === undefined) chunks.set(key, (frames = framesOf(page, stream.format)));
      stream.deliver(frames.chunk, frames.count, head);
    }
  }
}
