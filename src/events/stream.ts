import { Readable } from 'node:stream';
import { comparePositions, type FeedEvent, type FeedPosition } from '../store/event-store.js';
import type { EventType } from '../model/events.js';
import { comment, eventFrame, HEARTBEAT } from './frames.js';

/** Events read from the store at a time while a stream catches up. */
export const CATCH_UP_PAGE = 500;

/** What a stream needs of the feed (feed.ts). */
export interface StreamSource {
  /**
   * The store's events after `after`, CATCH_UP_PAGE at most; undefined when the feed no longer holds them
   * all (retention deleted some while the stream read up to `after`).
   */
  read(after: FeedPosition): Promise<FeedEvent[] | undefined>;
  /**
   * Joins the live stream when the feed has broadcast everything after `cursor` that it has not sent:
   * answers those events (often none), or undefined when the cursor is older than the feed remembers.
   */
  join(stream: EventStream, cursor: FeedPosition): FeedEvent[] | undefined;
  /** The stream has ended, for whatever reason. */
  closed(stream: EventStream): void;
  /** Events written into a stream (metrics). */
  sent(count: number): void;
}

/** What a stream sends: the events of these types (all when undefined), their int64 members named in `int64` as strings. */
export interface StreamFormat {
  types: ReadonlySet<EventType> | undefined;
  int64?: ReadonlySet<string> | undefined;
}

/**
 * The last line of a stream whose next events retention deleted before it could read them: it ends, and its
 * client's reconnect (Last-Event-ID, an event deleted with them) is answered 410, telling it to resynchronise.
 */
const EVENTS_GONE = 'the events after the last one sent are no longer in the feed (EVENTS_RETENTION_DAYS): reconnect';

/** Frames of the events a stream sends, as one chunk, and how many they are. */
export function framesOf(events: readonly FeedEvent[], { types, int64 }: StreamFormat): { chunk: Buffer; count: number } {
  let text = '';
  let count = 0;
  for (const event of events) {
    if (types !== undefined && !types.has(event.type)) continue;
    text += eventFrame(event, int64);
    count++;
  }
  return { chunk: Buffer.from(text), count };
}

/**
 * One event stream (Server-Sent Events), as the readable side of the answer. It catches up by reading the
 * store after its cursor, a page each time the client has taken the last (so a stream that resumes far
 * back holds one page at most); once it has read all the store had, it joins the feed's broadcast and gets
 * new events as the feed reads them, as shared chunks. A live stream whose client takes less than it is
 * given (a burst of events, a slow network) falls back to catching up as its client takes them, so its
 * memory stays bounded by about one chunk. A client that has fallen more than `maxBacklogBytes` behind
 * and took nothing for a whole heartbeat interval is disconnected: it resumes with Last-Event-ID.
 */
export class EventStream extends Readable {
  /** Gets the feed's broadcast. */
  live = false;
  private catchingUp = false;
  /** Ended by the server (a revoked token, a stopping server): nothing more is pushed but what is already buffered and the end. */
  private ending = false;
  /** The last event handed to this stream (or skipped by its filter): it continues after this. */
  private cursor: FeedPosition;
  /** Bytes pushed in all, bytes the feed broadcast that this stream has not sent (since it fell back), and what the client had taken at the last check. */
  private pushed = 0;
  private behind = 0;
  private takenAtCheck = -1;

  constructor(
    cursor: FeedPosition,
    /** Which events, and how their frames are written. */
    readonly format: StreamFormat,
    private readonly source: StreamSource,
    private readonly maxBacklogBytes: number,
    first: string,
  ) {
    super({ highWaterMark: 64 * 1024 });
    this.cursor = cursor;
    this.pushChunk(Buffer.from(first));
  }

  /** Streams with the same key get the same chunks. */
  get filterKey(): string {
    const { types, int64 } = this.format;
    return `${int64 === undefined ? '' : 'int64 '}${types === undefined ? '' : [...types].sort().join(' ')}`;
  }

  get position(): FeedPosition {
    return this.cursor;
  }

  override _read(): void {
    if (!this.live) void this.catchUp();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.source.closed(this);
    callback(error);
  }

  /**
   * New events from the feed's broadcast: `chunk` holds this stream's frames of the events up to `head`.
   * A stream that is not live only counts them (it reads them from the store when its client is ready).
   */
  deliver(chunk: Buffer, count: number, head: FeedPosition): void {
    if (this.ending || this.readableEnded || this.destroyed) return;
    if (!this.live) {
      this.behind += chunk.length;
      return;
    }
    if (comparePositions(head, this.cursor) > 0) this.cursor = head;
    if (count === 0) return;
    this.source.sent(count);
    if (!this.pushChunk(chunk)) {
      // More than the client takes now: go on from the store, at the client's pace.
      this.live = false;
      this.behind = 0;
    }
  }

  /**
   * Every heartbeat interval: disconnects a client that has more than maxBacklogBytes waiting for it and
   * took nothing since the last check (it resumes with Last-Event-ID); else sends a heartbeat.
   */
  check(): void {
    if (this.readableEnded || this.destroyed) return;
    // Ended a whole heartbeat ago and its client has not taken the end: it is cut off.
    if (this.ending) {
      this.destroy();
      return;
    }
    const taken = this.pushed - this.readableLength;
    if (this.readableLength + this.behind > this.maxBacklogBytes && taken === this.takenAtCheck) {
      this.destroy();
      return;
    }
    this.takenAtCheck = taken;
    this.pushChunk(HEARTBEAT);
  }

  /**
   * Ends the stream cleanly: what is buffered is sent, then `reason` as a last comment line (when given),
   * then the answer ends (the client reconnects). No event is added meanwhile; a client that has not taken
   * the end by the next heartbeat is cut off.
   */
  end(reason?: string): void {
    if (this.ending || this.readableEnded || this.destroyed) return;
    this.ending = true;
    this.live = false;
    if (reason !== undefined) this.pushChunk(Buffer.from(comment(reason)));
    this.push(null);
  }

  private pushChunk(chunk: Buffer): boolean {
    this.pushed += chunk.length;
    return this.push(chunk);
  }

  private async catchUp(): Promise<void> {
    if (this.catchingUp || this.ending) return;
    this.catchingUp = true;
    try {
      for (;;) {
        const page = await this.source.read(this.cursor);
        if (this.ending || this.destroyed || this.readableEnded) return;
        if (page === undefined) {
          // Going on after the cursor would skip what was deleted, without a word.
          this.end(EVENTS_GONE);
          return;
        }
        const more = this.pushEvents(page);
        if (page.length === CATCH_UP_PAGE) {
          if (!more) return; // _read asks again once the client has taken some
          continue;
        }
        // All the store had when it was read: join the broadcast, if it reaches back to here.
        const missed = this.source.join(this, this.cursor);
        if (missed !== undefined) {
          this.live = true;
          this.pushEvents(missed);
          return;
        }
      }
    } catch (error) {
      // The store failed: the client reconnects and resumes.
      this.destroy(error instanceof Error ? error : new Error(String(error)));
    } finally {
      this.catchingUp = false;
    }
  }

  /** Pushes the frames of `events` after the cursor; false when the client should take some first. */
  private pushEvents(events: readonly FeedEvent[]): boolean {
    const fresh = events.filter((event) => comparePositions(event.position, this.cursor) > 0);
    if (fresh.length === 0) return true;
    this.cursor = fresh.at(-1)!.position;
    const { chunk, count } = framesOf(fresh, this.format);
    if (count === 0) return true;
    this.source.sent(count);
    this.behind = Math.max(0, this.behind - chunk.length);
    return this.pushChunk(chunk);
  }
}
