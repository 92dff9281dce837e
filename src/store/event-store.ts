import type { EventType } from '../model/events.js';

/**
 * The change feed as the store keeps it: every plant change (put, patch, delete, each plant of an import)
 * records one event in the transaction of the change, whether or not a webhook endpoint subscribes. Its id
 * is the webhook-id its webhook messages carry and its body the webhook body (model/events.ts). Events
 * are read in commit order: a reader that sees an event sees every event before it (see the stores'
 * migrations for how each store makes that so).
 */

/**
 * Where an event stands in the feed: ordered by `commit`, then `index`. SQLite: the row's position (and
 * index 0); PostgreSQL: the commit's number and the event's place among that commit's events.
 */
export interface FeedPosition {
  readonly commit: number;
  readonly index: number;
}

/** Before every event. */
export const FEED_START: FeedPosition = { commit: 0, index: 0 };

/**
 * The id of the place before every event (a ULID of all zeros): a stream that starts on a feed with no
 * event yet hands it to its client as its last event id, so that a reconnect misses nothing. `find` knows
 * it while no event has been deleted (by retention); after, it is as gone as any deleted event.
 */
export const FEED_START_ID = 'msg_00000000000000000000000000';

/** Negative, zero or positive as `a` comes before, at or after `b` in the feed. */
export function comparePositions(a: FeedPosition, b: FeedPosition): number {
  return a.commit - b.commit || a.index - b.index;
}

export interface FeedEvent {
  readonly position: FeedPosition;
  /** The webhook-id, msg_<ulid>. */
  readonly id: string;
  readonly type: EventType;
  /** The webhook body: `{"type":…,"timestamp":…,"data":…}`, ids exact. */
  readonly body: string;
}

export interface FeedRead {
  /** Only events after this position (FEED_START: from the oldest kept). */
  after: FeedPosition;
  /** At most this many (at least 1). */
  limit: number;
  /** Only events of these types; undefined: every type. */
  types?: readonly EventType[] | undefined;
}

/**
 * A page of the feed (GET /events). A read of some types examines a bounded number of events (SQLite:
 * EVENT_SCAN_WINDOW, its reads run on the event loop); when that window ends before `limit` events of the
 * types were found, `examinedTo` is the id of the last event examined, and the next page starts after it.
 */
export interface FeedPage {
  events: FeedEvent[];
  examinedTo?: string;
}

export interface EventStore {
  /** Events in feed order. */
  read(options: FeedRead): Promise<FeedEvent[]>;
  /** A page of events in feed order, its work bounded (FeedPage). */
  page(options: FeedRead): Promise<FeedPage>;
  /**
   * Where the event with this id stands; undefined when there is none (never was, or deleted by retention).
   * FEED_START_ID is FEED_START while the first event ever recorded is still kept (or there is none yet).
   */
  find(id: string): Promise<FeedPosition | undefined>;
  /**
   * Whether the feed still holds every event after `after`: retention, which deletes the oldest first and
   * always a run of them (never one past an event it keeps), has deleted neither the event at `after` nor
   * any after it (FEED_START: none at all). A reader that found its cursor, then read on after it, asks
   * this after each read: retention running meanwhile may have deleted the events it was about to read,
   * which it would otherwise skip without a word.
   */
  holds(after: FeedPosition): Promise<boolean>;
  /** The newest event, if there is one. */
  newest(): Promise<FeedEvent | undefined>;
  /**
   * Deletes the events committed before `before` (epoch ms), the oldest first, always keeping the newest
   * event (so that a consumer that has read everything can resume). Only ever the oldest run of events:
   * it stops at the first one it keeps, even where a later one is older (two processes' clocks, or a clock
   * set back), so that `holds` can tell by the oldest kept. Answers how many it deleted.
   */
  deleteExpired(before: number): Promise<number>;
  /** Calls `listener` after each commit of this process that recorded events, so that streams get them at once. */
  onRecorded(listener: () => void): void;
}
