import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { StoreFollower } from '../../src/events/follower.js';
import { FEED_START, type EventStore, type FeedEvent } from '../../src/store/event-store.js';
import { createLogger } from '../../src/logging/logger.js';
import { StoreUnavailableError } from '../../src/store/store.js';
import { openTestStore } from '../helpers.js';
import { LogSink } from '../log-sink.js';
import { until } from '../toolkit.js';

/**
 * The change feed's one reader of the store (events/follower.ts) while the store cannot be read: it says
 * so once, keeps trying at every poll, hands on nothing meanwhile, and once the store answers again hands on
 * every event committed while it was down, in the feed's order, each once, and says it reads again.
 */

/** The store's events, failing every read (and `newest`) while `down.now`; the reads asked for are counted. */
function flaky(events: EventStore): { events: EventStore; down: { now: boolean }; reads: { count: number } } {
  const down = { now: false };
  const reads = { count: 0 };
  const proxy = new Proxy(events, {
    get(target, name, receiver) {
      if (name === 'read' || name === 'newest') {
        const real = (Reflect.get(target, name, receiver) as (...args: unknown[]) => Promise<unknown>).bind(target);
        return (...args: unknown[]) => {
          if (name === 'read') reads.count++;
          return down.now ? Promise.reject(new StoreUnavailableError('database down')) : real(...args);
        };
      }
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { events: proxy, down, reads };
}

/** The follower's log lines, at info and above: level (30 info, 40 warn), msg, and the error's type. */
function recordingLog(): { log: ReturnType<typeof createLogger>; lines: () => Array<{ level: unknown; msg: unknown; err?: unknown }> } {
  const sink = new LogSink();
  const lines = () =>
    sink.lines().map(({ level, msg, err }) => ({ level, msg, ...(err === undefined ? {} : { err: (err as { type: string }).type }) }));
  return { log: createLogger('info', sink), lines };
}

describe('the change feed follower, when the store is unavailable', () => {
  it('tells it once, tries again at every poll, and once the store is back hands on what was committed meanwhile, in order, once each', async () => {
    const store = await openTestStore(after);
    after(() => store.close());
    const { events, down, reads } = flaky(store.events);
    const { log, lines } = recordingLog();
    const handed: FeedEvent[] = [];
    const follower = new StoreFollower(events, 20, log, (page) => handed.push(...page));
    after(() => follower.stop());
    await follower.follow();
    await store.plants.put({ id: 1, name: 'before' });
    await until(() => handed.length === 1, 'the first event');

    down.now = true;
    for (let id = 2; id <= 6; id++) await store.plants.put({ id, name: `meanwhile ${id}` });
    await until(() => lines().length === 1, 'the failure to be told');
    assert.deepEqual(lines(), [{ level: 40, msg: 'events: cannot read new events from the store', err: 'StoreUnavailableError' }]);
    // It keeps trying, at every poll, and says so no more.
    const failed = reads.count;
    await until(() => reads.count >= failed + 3, 'three more reads at the polls');
    assert.equal(lines().length, 1, 'told once while it fails');
    assert.equal(handed.length, 1, 'nothing handed on while the store is down');

    down.now = false;
    await until(() => handed.length === 6, 'the events committed while the store was down');
    const feed = await store.events.read({ after: FEED_START, limit: 100 });
    assert.deepEqual(
      handed.map((event) => event.id),
      feed.map((event) => event.id),
      'every event once, in the order of the feed',
    );
    assert.deepEqual(lines().slice(1), [{ level: 30, msg: 'events: reading the store again' }]);
    assert.deepEqual(follower.head, { position: feed.at(-1)!.position, id: feed.at(-1)!.id });
  });

  it('cannot start while the store is down, and starts once it answers', async () => {
    const store = await openTestStore(after);
    after(() => store.close());
    await store.plants.put({ id: 1, name: 'kept' });
    const { events, down } = flaky(store.events);
    const { log } = recordingLog();
    const handed: FeedEvent[] = [];
    const follower = new StoreFollower(events, 20, log, (page) => handed.push(...page));
    after(() => follower.stop());
    down.now = true;
    await assert.rejects(follower.follow(), StoreUnavailableError);
    assert.equal(follower.active, false, 'a failed start leaves it stopped, to be started again');
    down.now = false;
    await follower.follow();
    assert.equal(follower.active, true);
    assert.equal(follower.head.id, (await store.events.newest())!.id, 'it follows from the newest event');
    await store.plants.put({ id: 2, name: 'after the start' });
    await until(() => handed.length === 1, 'the next event');
    assert.match(handed[0]!.body, /after the start/);
  });
});
