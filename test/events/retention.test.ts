import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sweepExpiredEvents } from '../../src/events/retention.js';
import type { EventStore } from '../../src/store/event-store.js';
import { createLogger } from '../../src/logging/logger.js';
import { StoreUnavailableError } from '../../src/store/store.js';
import { openTestStore } from '../helpers.js';
import { LogSink } from '../log-sink.js';
import { until } from '../toolkit.js';

/**
 * The change feed's retention sweeper (events/retention.ts): at start and every hour it deletes the events
 * older than EVENTS_RETENTION_DAYS, always keeping the newest; a store that cannot delete is warned about,
 * and the next sweep tries again; stopped, it sweeps no more.
 */

/** The sweeper's log lines, at debug and above: level (20 debug, 40 warn), msg, what it deleted and the error's type. */
function recordingLog(): { log: ReturnType<typeof createLogger>; lines: () => Array<Record<string, unknown>> } {
  const sink = new LogSink();
  const lines = () =>
    sink.lines().map(({ level, msg, deleted, err }) => ({
      level,
      msg,
      ...(deleted === undefined ? {} : { deleted }),
      ...(err === undefined ? {} : { err: (err as { type: string }).type }),
    }));
  return { log: createLogger('debug', sink), lines };
}

/** The store's events, with deleteExpired counted, and failing while `down.now`. */
function watched(events: EventStore, down = { now: false }): { events: EventStore; asked: number[] } {
  const asked: number[] = [];
  const proxy = new Proxy(events, {
    get(target, name, receiver) {
      if (name === 'deleteExpired') {
        return (before: number) => {
          asked.push(before);
          return down.now ? Promise.reject(new StoreUnavailableError('database down')) : target.deleteExpired(before);
        };
      }
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { events: proxy, asked };
}

describe('the retention sweeper of the change feed', () => {
  it('deletes at start the events past the retention, keeps the newest, and says how many at debug', async () => {
    const store = await openTestStore(after);
    after(() => store.close());
    for (let id = 1; id <= 5; id++) await store.plants.put({ id, name: `p${id}` });
    const newest = await store.events.newest();
    // A retention of nothing: every event committed before now is past it (the clock past the last commit first).
    const written = Date.now();
    await until(() => Date.now() > written, 'the clock to pass the last write');
    const { log, lines } = recordingLog();
    const stop = sweepExpiredEvents(store.events, 0, log);
    after(stop);
    await until(() => lines().length > 0, 'the sweep at start');
    assert.deepEqual(lines(), [{ level: 20, msg: 'events: expired events deleted', deleted: 4 }]);
    const left = await store.events.read({ after: { commit: 0, index: 0 }, limit: 10 });
    assert.deepEqual(
      left.map((event) => event.id),
      [newest!.id],
      'the newest stays',
    );
  });

  it('keeps what is within the retention, and says nothing', async () => {
    const store = await openTestStore(after);
    after(() => store.close());
    for (let id = 1; id <= 3; id++) await store.plants.put({ id, name: `p${id}` });
    const { events, asked } = watched(store.events);
    const { log, lines } = recordingLog();
    const before = Date.now();
    const stop = sweepExpiredEvents(events, 30, log);
    after(stop);
    await until(() => asked.length > 0, 'the sweep at start');
    // Asked to delete what is older than 30 days.
    assert.ok(Math.abs(before - 30 * 86_400_000 - asked[0]!) < 60_000, `before ${new Date(asked[0]!).toISOString()}`);
    assert.equal((await store.events.read({ after: { commit: 0, index: 0 }, limit: 10 })).length, 3);
    assert.deepEqual(lines(), []);
  });

  it('warns when the store cannot delete, sweeps again every hour, and no more once stopped', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const store = await openTestStore(after);
    after(() => store.close());
    for (let id = 1; id <= 3; id++) await store.plants.put({ id, name: `p${id}` });
    const down = { now: true };
    const { events, asked } = watched(store.events, down);
    const { log, lines } = recordingLog();
    const stop = sweepExpiredEvents(events, 0, log);
    await until(() => lines().length === 1, 'the failed sweep at start to be told');
    assert.deepEqual(lines(), [{ level: 40, msg: 'events: could not delete expired events', err: 'StoreUnavailableError' }]);

    // An hour later the store is back: the next sweep deletes.
    down.now = false;
    t.mock.timers.tick(3_600_000);
    await until(() => lines().length === 2, 'the hourly sweep');
    assert.deepEqual(lines()[1], { level: 20, msg: 'events: expired events deleted', deleted: 2 });
    assert.equal(asked.length, 2);

    stop();
    t.mock.timers.tick(3 * 3_600_000);
    // The sweeps are asked for at the tick, synchronously: none was.
    assert.equal(asked.length, 2, 'no sweep once stopped');
  });
});
