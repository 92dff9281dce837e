import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { comparePositions, FEED_START, type EventStore, type FeedEvent, type FeedPosition } from '../store/event-store.js';

/** Events read from the store at a time. */
const PAGE = 1000;
/** The newest events kept in memory: a stream that resumes within them joins without reading the store. */
const RECENT = 1024;
/**
 * The least time between two reads of new events: under a write load every commit wakes the follower, and
 * each read costs one socket write per stream, so commits that land within this time of the last read are
 * read (and sent) together. It adds at most this much to an event's lag.
 */
const COALESCE_MS = 10;

/**
 * One reader of the change feed in the store, for a process: from its newest event on, it reads what is
 * new at once after this process's commits (the store tells it), and every EVENTS_POLL_MS for the commits
 * of others (other instances, the CLI, other worker processes), and hands each page of new events to
 * `onEvents`. It keeps the newest events in memory. It follows only between `follow` and `stop` (while
 * streams are open: events/feed.ts); stopped, it forgets what it read, and starts afresh.
 */
export class StoreFollower {
  /** Following the store: resolved once `head` is known. */
  private following: Promise<void> | undefined;
  private ready = false;
  /** Changes whenever it stops following: reads of an earlier epoch are dropped. */
  private epoch = 0;
  /** The newest event read (FEED_START: none), and its id. */
  private newest: FeedPosition = FEED_START;
  private newestId: string | undefined;
  /** The newest events read, and the position they follow: they hold every event after `recentStart`. */
  private recent: FeedEvent[] = [];
  private recentStart: FeedPosition = FEED_START;
  private reading = false;
  private again = false;
  private failing = false;
  /** Whether the next read first checks that the newest event read is still in the store (see `replaced`). */
  private checkNext = false;
  private poll: NodeJS.Timeout | undefined;
  /** When the last read of new events started (performance.now()), and the read put off until COALESCE_MS after it. */
  private lastPull = -Infinity;
  private deferred: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: EventStore,
    private readonly pollMs: number,
    private readonly log: Pick<FastifyBaseLogger, 'warn' | 'info'>,
    /** New events, after `before`: a page at a time, in the feed's order. */
    private readonly onEvents: (page: FeedEvent[], before: FeedPosition) => void,
    /** The store's feed is no longer the one read (see `replaced`): it has stopped following, and forgotten it. */
    private readonly onReplaced: () => void = () => undefined,
  ) {
    store.onRecorded(this.wake);
  }

  /** The newest event read, and its id (none: FEED_START, undefined). */
  get head(): { position: FeedPosition; id: string | undefined } {
    return { position: this.newest, id: this.newestId };
  }

  /** Starts following the store from its newest event, once for every caller while it follows. */
  follow(): Promise<void> {
    this.following ??= (async () => {
      const epoch = this.epoch;
      const newest = await this.store.newest();
      if (epoch !== this.epoch) return;
      this.newest = this.recentStart = newest?.position ?? FEED_START;
      this.newestId = newest?.id;
      this.recent = [];
      this.checkNext = false;
      this.ready = true;
      this.poll = setInterval(this.wake, this.pollMs).unref();
      // Events committed while the newest was read.
      this.wake();
    })().catch((error: unknown) => {
      this.following = undefined;
      throw error;
    });
    return this.following;
  }

  /** Stops reading the store, and forgets what it read. */
  stop(): void {
    clearInterval(this.poll);
    clearTimeout(this.deferred);
    this.poll = this.deferred = undefined;
    if (this.following === undefined) return;
    this.epoch++;
    this.following = undefined;
    this.ready = false;
    this.reading = false;
    this.recent = [];
  }

  /** Whether it follows (or is starting to). */
  get active(): boolean {
    return this.following !== undefined;
  }

  /** The events after `cursor` when it holds them all (a stream joining live), else undefined. */
  after(cursor: FeedPosition): FeedEvent[] | undefined {
    if (!this.ready || comparePositions(cursor, this.recentStart) < 0) return undefined;
    return this.recent.filter((event) => comparePositions(event.position, cursor) > 0);
  }

  /** Where the event with this id stands, when it is among the newest read. */
  find(id: string): FeedPosition | undefined {
    return this.recent.find((event) => event.id === id)?.position;
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

  private async pull(): Promise<void> {
    const epoch = this.epoch;
    this.reading = true;
    this.again = false;
    try {
      if (this.checkNext && (await this.replaced())) {
        if (epoch !== this.epoch) return;
        this.log.warn(
          { event: this.newestId },
          "events: the newest event read is no longer in the store (a restored database, or a failover that lost the last commits): ending the streams, which resume from their clients' last events",
        );
        this.stop();
        this.onReplaced();
        return;
      }
      if (epoch !== this.epoch) return;
      let read = 0;
      for (;;) {
        const page = await this.store.read({ after: this.newest, limit: PAGE });
        if (epoch !== this.epoch) return;
        if (page.length > 0) this.take(page);
        read += page.length;
        if (page.length < PAGE) break;
      }
      // Nothing new: the next read checks first that the store still holds what was read.
      this.checkNext = read === 0;
      if (this.failing) this.log.info('events: reading the store again');
      this.failing = false;
    } catch (error) {
      // The store is unavailable: the next wake-up (at most EVENTS_POLL_MS away) tries again, and checks first.
      if (!this.failing) this.log.warn({ err: error }, 'events: cannot read new events from the store');
      this.failing = true;
      this.checkNext = true;
    } finally {
      if (epoch === this.epoch) {
        this.reading = false;
        // Commits told of while this read was under way: read again (after COALESCE_MS; a failing store waits for the poll).
        if (this.again && !this.failing) this.wake();
      }
    }
  }

  /**
   * Whether the store's feed is no longer the one read: the newest event read is gone from where it was.
   * A database restored from a backup, or a standby promoted without the last commits (asynchronous
   * replication), numbers its new commits again from an earlier place: read on after the newest event
   * read, the feed would skip every event numbered below it, without a word. (Retention never deletes
   * the store's newest event, and this is asked only once the follower has read all there was, or after
   * the store failed.)
   */
  private async replaced(): Promise<boolean> {
    if (this.newestId === undefined) return false;
    const at = await this.store.find(this.newestId);
    return at === undefined || comparePositions(at, this.newest) !== 0;
  }

  /** New events, after the newest: remembered, and handed on. */
  private take(page: FeedEvent[]): void {
    const before = this.newest;
    this.newest = page.at(-1)!.position;
    this.newestId = page.at(-1)!.id;
    this.recent.push(...page);
    if (this.recent.length > RECENT) {
      const dropped = this.recent.splice(0, this.recent.length - RECENT);
      this.recentStart = dropped.at(-1)!.position;
    }
    this.onEvents(page, before);
  }
}
