import { once } from 'node:events';
import { EVENT_TYPES, type EventType } from '../model/event-types.js';
import { Api, FollowEnded } from './api.js';
import type { ApiTarget } from './api-target.js';
import { print, say } from './output.js';

/**
 * `events tail --url`: the change feed of a running service over HTTP, for a machine that cannot reach its
 * database. It follows GET /events as Server-Sent Events by the typed client's follower, the one the console
 * uses, by its one policy (docs/change-feed.md: reconnecting after the `retry:` hint with backoff, resuming
 * with Last-Event-ID, so it misses nothing and prints nothing twice), and prints each plant event's data
 * line, which is the event as JSON. It says on stderr when the connection is lost and when it is back; it
 * stops, exit 1, on what reconnecting cannot mend (a refusal, a 410: events it would have missed) and on an
 * address where nothing ever answered.
 */

interface HttpTail extends ApiTarget {
  after: string | undefined;
  types: ReadonlySet<EventType> | undefined;
  signal: AbortSignal;
}

const PLANT_EVENTS: ReadonlySet<string> = new Set(EVENT_TYPES);
/**
 * How long it keeps trying an address where nothing has answered yet: a mistyped URL or a service that is
 * not running fails with a message naming it, instead of retrying forever (the follower's default).
 */
const NEVER_ANSWERED_GIVE_UP_MS = 5000;

export async function tailHttp({ after, types, signal, ...target }: HttpTail): Promise<void> {
  const api = await Api.connect(target);
  const url = `${api.where}/events`;
  let lost = false;
  // Where it starts, once, as the store-side tail says it: for a later `--after` should nothing be printed before it is stopped.
  let told = false;
  const tell = (id: string) => {
    if (!told) say(`plant-store: following the events after ${id}`);
    told = true;
  };
  await api
    .follow({
      ...(after !== undefined && { after }),
      ...(types !== undefined && { types: [...types] }),
      signal,
      giveUpMs: NEVER_ANSWERED_GIVE_UP_MS,
      async onEvent(event) {
        // A stream from now first names the newest event, where it starts.
        if (event.type === 'start') tell(event.lastEventId);
        if (PLANT_EVENTS.has(event.type) && !print(`${event.data}\n`)) await once(process.stdout, 'drain', { signal });
      },
      onState(state) {
        if (state.kind === 'live') {
          if (after !== undefined) tell(after);
          if (lost) say('plant-store: reconnected');
          lost = false;
        } else if (state.kind === 'reconnecting') {
          if (!lost)
            say(
              `plant-store: ${state.answered ? `connection lost (${state.reason}); reconnecting` : `cannot connect to ${url} (${state.reason}); trying again`}`,
            );
          lost = true;
        }
      },
    })
    .catch((error: unknown) => {
      if (signal.aborted) return;
      if (!(error instanceof FollowEnded)) throw error;
      if (error.reason === 'unreachable')
        throw new Error(
          `nothing answers at ${url} (${error.message}), tried for ${NEVER_ANSWERED_GIVE_UP_MS / 1000} s: is the service running there?`,
        );
      // Another program's 200 (a proxy's page) is no stream of events: said, rather than read as one that never sends any.
      if (error.reason === 'not-a-stream')
        throw new Error(`${api.where} does not answer as the plant store does (is it the service's address?): ${error.message}`);
      throw new Error(`GET /events: ${error.message}`);
    });
}
