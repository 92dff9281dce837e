import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { EVENT_ID_PATTERN } from '../events/schema.js';
import { eventJson } from '../events/frames.js';
import { comparePositions, FEED_START, FEED_START_ID, type EventStore, type FeedPosition } from '../store/event-store.js';
import { StoreUnavailableError } from '../store/store.js';
import { EVENT_TYPES, type EventType } from '../model/events.js';
import { apiTarget, URL_OPTION } from './api-target.js';
import { UsageError, type Command } from './command.js';
import { withStore } from './common.js';
import { tailHttp } from './events-http.js';
import { print, say } from './output.js';

/** Events read at a time. */
const PAGE = 1000;
/** The wait before reading again after the store failed. */
const RETRY_MS = 1000;

/** `plant-store events tail`: the change feed as NDJSON, from the store or from a running service. */
export const eventsCommand: Command = {
  name: 'events',
  summary: 'The change feed: every plant change, in the order to apply them, as GET /events gives it.',
  usesStore: true,
  actions: {
    tail: {
      summary: 'print the change feed as NDJSON, then each event as it commits, until stopped',
      details:
        'From after ID, or from now, as GET /events lists them; it resumes by itself after an outage, and through --url reconnects (docs/change-feed.md).',
      options: {
        after: { type: 'string', value: 'ID', help: 'start after this event id (msg_ and 26 characters)' },
        type: { type: 'string', value: 'TYPE', multiple: true, choices: EVENT_TYPES, help: `only events of this type, of ${EVENT_TYPES.join(', ')}` },
        url: URL_OPTION,
      },
      async run(given) {
        const after = given.string('after');
        if (after !== undefined && !new RegExp(EVENT_ID_PATTERN).test(after)) {
          throw new UsageError(`--after must be an event id (msg_ and 26 characters), got "${after}"`);
        }
        const names = given.strings('type');
        const types = names === undefined ? undefined : new Set(names as EventType[]);
        const target = apiTarget(given, 'with events:read');
        // Ctrl-C, SIGTERM or a closed pipe (| head) end the tail, as success.
        const stop = new AbortController();
        const end = () => stop.abort();
        process.once('SIGINT', end).once('SIGTERM', end);
        process.stdout.on('error', end);
        try {
          if (target !== undefined) {
            await tailHttp({ ...target, after, types, signal: stop.signal });
          } else {
            await withStore((store, config) => tail(store.events, { after, types, pollMs: config.eventsPollMs, signal: stop.signal }));
          }
        } finally {
          process.off('SIGINT', end).off('SIGTERM', end);
        }
      },
    },
  },
};

/**
 * Prints the events after `after` (or from the newest), reading the store every `pollMs` once caught up.
 * Its place is kept in memory: when the store fails (a restart, a failover) it reads again from there.
 */
async function tail(
  events: EventStore,
  options: { after: string | undefined; types: ReadonlySet<EventType> | undefined; pollMs: number; signal: AbortSignal },
): Promise<void> {
  const { signal, types } = options;
  let cursor: FeedPosition | undefined;
  /** The id of the event at the cursor (the last one read, or where it started), for the words of a gone place. */
  let cursorId = '';
  let failing = false;
  while (!signal.aborted) {
    let wait = options.pollMs;
    try {
      if (cursor === undefined) {
        const from = await start(events, options.after);
        cursor = from.position;
        cursorId = from.id;
        // Where it starts, for a later `--after` should nothing be printed before it is stopped.
        say(`plant-store: following the events after ${from.id}`);
      }
      // Every type is read (and the others skipped here), so that the place moves on past them.
      const page = await events.read({ after: cursor, limit: PAGE });
      // The page holds every event after the cursor only if the cursor's event is still where it was, asked
      // after the read: retention may have deleted the events after it meanwhile (a slow reader, a store
      // away), and a restored database or a standby promoted without the last commits numbers its commits
      // again from an earlier place. Read on, either would skip events without a word.
      if (!samePlace(await events.find(cursorId), cursor)) throw new Error(gone(cursorId));
      if (failing) say('plant-store: reading events again');
      failing = false;
      let lines = '';
      for (const event of page) if (types === undefined || types.has(event.type)) lines += `${eventJson(event)}\n`;
      if (lines !== '' && !print(lines)) await once(process.stdout, 'drain', { signal });
      if (page.length > 0) ({ position: cursor, id: cursorId } = page.at(-1)!);
      if (page.length === PAGE) wait = 0;
    } catch (error) {
      if (signal.aborted) return;
      if (!(error instanceof StoreUnavailableError)) throw error;
      if (!failing) say(`plant-store: cannot read events (${error.message}); trying again every ${RETRY_MS / 1000} s`);
      failing = true;
      wait = RETRY_MS;
    }
    if (wait > 0) await sleep(wait, undefined, { signal }).catch(() => undefined);
  }
}

/** Why the tail cannot go on after the event `id`, and what to do. */
function gone(id: string): string {
  return (
    `event ${id} is no longer in the feed (older than EVENTS_RETENTION_DAYS, never an event, or lost with the feed ` +
    'replaced: a restored database, a failover that lost the last commits): ' +
    'export the plants (plant-store plants export), then tail from now'
  );
}

function samePlace(found: FeedPosition | undefined, cursor: FeedPosition): boolean {
  return found !== undefined && comparePositions(found, cursor) === 0;
}

/** Where the tail starts: after the event `after`, or after the newest (FEED_START_ID: none yet). */
async function start(events: EventStore, after: string | undefined): Promise<{ position: FeedPosition; id: string }> {
  if (after === undefined) {
    const newest = await events.newest();
    return newest ?? { position: FEED_START, id: FEED_START_ID };
  }
  const position = await events.find(after);
  if (position === undefined) throw new Error(gone(after));
  return { position, id: after };
}
