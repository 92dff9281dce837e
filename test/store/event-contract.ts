import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { comparePositions, FEED_START, FEED_START_ID, type FeedEvent, type FeedPosition } from '../../src/store/event-store.js';
import type { Store } from '../../src/store/store.js';
import type { StoredPlant } from '../../src/model/plant.js';
import { EVENT_TYPES, eventBody, type EventType } from '../../src/model/events.js';
import { newId } from '../../src/model/ids.js';
import { withStore } from './webhook-kit.js';

/** Every event of the feed after `after`, read `limit` at a time. */
async function readAll(store: Store, limit = 1000, after: FeedPosition = FEED_START, types?: EventType[]): Promise<FeedEvent[]> {
  const all: FeedEvent[] = [];
  for (;;) {
    const page = await store.events.read({ after, limit, types });
    all.push(...page);
    if (page.length < limit) return all;
    after = page.at(-1)!.position;
  }
}

/** `[type, data]` of each event, ids as text (exact). */
function summary(events: readonly FeedEvent[]): Array<[string, Record<string, unknown>]> {
  return events.map((e) => {
    const body = JSON.parse(e.body.replace(/"id":(-?\d+)/, '"id":"$1"')) as { type: string; data: Record<string, unknown> };
    return [body.type, body.data];
  });
}

function assertInOrder(events: readonly FeedEvent[]): void {
  for (let i = 1; i < events.length; i++) {
    assert.ok(comparePositions(events[i - 1]!.position, events[i]!.position) < 0, `event ${i} comes after event ${i - 1}`);
  }
}

/**
 * Sets, in the store's own tables, when the event `id` (with its commit's other events) was recorded: as a
 * clock set back, or two processes' clocks, may have written it.
 */
export type RecordedAt = (store: Store, id: string, at: number) => Promise<void>;

/** The change feed part of the store: an event per change, in the transaction of the change, read in commit order. */
export function eventContract(name: string, open: () => Promise<Store>, recordedAt: RecordedAt): void {
  describe(`event store contract: ${name}`, () => {
    it('records one event per change, with no webhook endpoint at all, in the order made; a write that changes nothing records none', () =>
      withStore(open, async (store) => {
        const { plants, events } = store;
        let told = 0;
        events.onRecorded(() => told++);
        assert.deepEqual(await events.read({ after: FEED_START, limit: 10 }), []);
        assert.equal(await events.newest(), undefined);
        assert.deepEqual(await events.find(FEED_START_ID), FEED_START, 'the place before every event');
        const before = Date.now();
        const max = 2n ** 63n - 1n;
        await plants.put({ id: max, name: 'Max', tag: 'big' });
        await plants.put({ id: max, name: 'Max' }, { createOnly: true }); // exists: nothing
        await plants.put({ id: max, name: 'Max II' });
        await plants.put({ id: max, name: 'no' }, { ifMatch: [123456] }); // precondition: nothing
        await plants.patch(max, { tag: 'patched' });
        await plants.patch(404, { name: 'missing' }); // nothing
        await plants.delete(404); // nothing
        await plants.delete(max, { ifMatch: [1] }); // nothing
        await plants.delete(max);
        assert.ok(told >= 1, 'this process was told events were recorded');
        const all = await readAll(store);
        assert.deepEqual(summary(all), [
          ['plant.created', { id: String(max), name: 'Max', tag: 'big' }],
          ['plant.updated', { id: String(max), name: 'Max II' }],
          ['plant.updated', { id: String(max), name: 'Max II', tag: 'patched' }],
          ['plant.deleted', { id: String(max) }],
        ]);
        assertInOrder(all);
        for (const event of all) {
          assert.match(event.id, /^msg_[0-9A-HJKMNP-TV-Z]{26}$/);
          assert.equal(event.type, JSON.parse(event.body.replace(/"id":-?\d+/g, '"id":0')).type);
          const { timestamp } = JSON.parse(event.body.replace(/"data":.*$/, '"data":0}')) as { timestamp: string };
          assert.ok(Date.parse(timestamp) >= before - 1000 && Date.parse(timestamp) <= Date.now() + 1000, timestamp);
        }
        assert.equal(new Set(all.map((e) => e.id)).size, all.length, 'one id per event');
        assert.deepEqual(await events.newest(), all.at(-1));
        for (const event of all) assert.deepEqual(await events.find(event.id), event.position);
        assert.equal(await events.find(newId('msg')), undefined);
        assert.equal(await events.find('msg_nope'), undefined);
      }));

    it('pages after any position, by type, each event once', () =>
      withStore(open, async (store) => {
        const { plants, events } = store;
        for (let id = 1; id <= 12; id++) await plants.put({ id, name: `p${id}` });
        for (let id = 1; id <= 12; id += 3) await plants.patch(id, { tag: 't' });
        for (let id = 2; id <= 12; id += 4) await plants.delete(id);
        const all = await readAll(store);
        assert.equal(all.length, 12 + 4 + 3);
        for (const limit of [1, 2, 5, 19, 100]) assert.deepEqual(await readAll(store, limit), all, `pages of ${limit}`);
        for (let i = 0; i < all.length; i++) {
          assert.deepEqual(await events.read({ after: all[i]!.position, limit: 3 }), all.slice(i + 1, i + 4), `after event ${i}`);
        }
        for (const types of [['plant.deleted'], ['plant.created', 'plant.updated'], [...EVENT_TYPES]] as EventType[][]) {
          const expected = all.filter((e) => types.includes(e.type));
          assert.deepEqual(await readAll(store, 2, FEED_START, types), expected, types.join(','));
          assert.deepEqual(
            await events.read({ after: all[5]!.position, limit: 100, types }),
            expected.filter((e) => comparePositions(e.position, all[5]!.position) > 0),
          );
        }
        assert.deepEqual(await events.read({ after: all.at(-1)!.position, limit: 10 }), []);
      }));

    it('orders the writes of one group commit as they were made, and each write after the one it waited for', () =>
      withStore(open, async (store) => {
        const { plants } = store;
        await plants.put({ id: 1, name: 'one' });
        // Made together: one batch of writes (one transaction), with the same plant written more than once.
        await Promise.all([
          plants.patch(999, { name: 'no such plant: no event, first in its transaction' }),
          plants.delete(998),
          plants.put({ id: 1, name: 'one again' }),
          plants.put({ id: 2, name: 'two' }),
          plants.put({ id: 1, name: 'one for the third time' }),
          plants.patch(2, { tag: 'patched' }),
          plants.delete(1),
          plants.put({ id: 1, name: 'one reborn' }, { createOnly: true }),
          plants.put({ id: 3, name: 'three' }),
        ]);
        const all = await readAll(store);
        assert.deepEqual(summary(all), [
          ['plant.created', { id: '1', name: 'one' }],
          ['plant.updated', { id: '1', name: 'one again' }],
          ['plant.created', { id: '2', name: 'two' }],
          ['plant.updated', { id: '1', name: 'one for the third time' }],
          ['plant.updated', { id: '2', name: 'two', tag: 'patched' }],
          ['plant.deleted', { id: '1' }],
          ['plant.created', { id: '1', name: 'one reborn' }],
          ['plant.created', { id: '3', name: 'three' }],
        ]);
        assertInOrder(all);
      }));

    it('records an event per imported plant, after the changes made before it, with the id and body its webhook messages carry', () =>
      withStore(open, async (store) => {
        const { plants, webhooks, events } = store;
        await plants.put({ id: 5, name: 'replaced by the import' });
        const rows: StoredPlant[] = [
          { id: 5, name: 'Fünf "quoted" \\ back\u0001slash', tag: '' },
          { id: -(2n ** 63n), name: 'Min \u2028 line sep </script>', tag: 'émoji 🌿' },
          { id: 9007199254740993n, name: 'Beyond 2^53' },
        ];
        // No subscriber during the import: events all the same.
        const importing = await plants.startImport();
        await importing.add(rows);
        await Promise.all([plants.put({ id: 6, name: 'during the import' }), importing.commit({ createOnly: false })]);
        const all = await readAll(store);
        assert.equal(all.length, 2 + rows.length);
        assert.deepEqual(summary(all.slice(0, 1)), [['plant.created', { id: '5', name: 'replaced by the import' }]]);
        const imported = all.filter((e) => !e.body.includes('"id":6,') && !e.body.includes('replaced by the import'));
        assert.deepEqual(
          imported.map((e) => /"data":\{"id":(-?\d+)/.exec(e.body)![1]),
          ['-9223372036854775808', '5', '9007199254740993'],
          'in id order, as the import stores them',
        );
        for (const event of imported) {
          const plant = rows.find((row) => String(row.id) === /"data":\{"id":(-?\d+)/.exec(event.body)![1])!;
          const { type, timestamp } = JSON.parse(event.body.replace(/"data":.*$/, '"data":0}')) as { type: EventType; timestamp: string };
          assert.equal(type, plant.id === 5 ? 'plant.updated' : 'plant.created');
          assert.equal(event.body, eventBody({ type, plant }, new Date(timestamp)));
        }
        assertInOrder(all);

        // With a subscriber: its messages carry the events' ids and bodies.
        const hook = await webhooks.createEndpoint({
          id: newId('ep'),
          url: 'https://hooks.example/plants',
          events: [...EVENT_TYPES],
          secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTAx',
          createdAt: Date.now(),
        });
        const again = await plants.startImport();
        await again.add([{ id: 7, name: 'seven' }]);
        await again.commit({ createOnly: false });
        await plants.patch(7, { name: 'seven patched' });
        const later = await events.read({ after: all.at(-1)!.position, limit: 10 });
        const messages = (await webhooks.claimDue(10, 60_000)).filter((m) => m.endpointId === hook.id);
        assert.deepEqual(messages.map((m) => [m.eventId, m.payload]).sort(), later.map((e) => [e.id, e.body]).sort());
      }));

    it('reads a commit of many events a page at a time, and resumes inside it', () =>
      withStore(open, async (store) => {
        const { plants, events } = store;
        await plants.put({ id: -1, name: 'before' });
        const importing = await plants.startImport();
        await importing.add(Array.from({ length: 2500 }, (_, i) => ({ id: i, name: `p${i}` })));
        await importing.commit({ createOnly: false });
        await plants.put({ id: -2, name: 'after' });
        const all = await readAll(store, 1000);
        assert.equal(all.length, 2502);
        assertInOrder(all);
        assert.deepEqual(
          all.slice(1, 2501).map((e) => Number(/"data":\{"id":(-?\d+)/.exec(e.body)![1])),
          Array.from({ length: 2500 }, (_, i) => i),
        );
        const middle = all[1234]!;
        assert.deepEqual(await events.find(middle.id), middle.position);
        assert.deepEqual(await events.read({ after: middle.position, limit: 2 }), all.slice(1235, 1237));
        assert.deepEqual(await events.read({ after: all[2499]!.position, limit: 5 }), all.slice(2500));
        assert.deepEqual(await readAll(store, 333, middle.position), all.slice(1235));
      }));

    it('deletes expired events, the oldest first, and always keeps the newest', () =>
      withStore(open, async (store) => {
        const { plants, events } = store;
        for (let id = 1; id <= 5; id++) await plants.put({ id, name: `p${id}` });
        const all = await readAll(store);
        assert.deepEqual(await events.find(FEED_START_ID), FEED_START, 'before the first, while it is kept');
        assert.equal(await events.holds(FEED_START), true, 'nothing deleted yet');
        assert.equal(await events.deleteExpired(0), 0, 'nothing is older than the epoch');
        assert.equal(await events.deleteExpired(Date.now() - 60_000), 0);
        assert.equal(await events.deleteExpired(Date.now() + 60_000), 4, 'all but the newest');
        assert.deepEqual(await readAll(store), all.slice(4));
        assert.equal(await events.find(all[0]!.id), undefined);
        assert.equal(await events.find(FEED_START_ID), undefined, 'the start is gone with the first event');
        assert.deepEqual(await events.find(all[4]!.id), all[4]!.position);
        assert.deepEqual(
          await Promise.all([FEED_START, ...all.map((event) => event.position)].map((position) => events.holds(position))),
          [false, false, false, false, false, true],
          'every event after a place is held only from the newest on',
        );
        assert.equal(await events.deleteExpired(Date.now() + 60_000), 0, 'the newest stays');
        // Numbering goes on after the newest.
        await plants.put({ id: 6, name: 'p6' });
        const [next] = await events.read({ after: all[4]!.position, limit: 10 });
        assert.ok(next && comparePositions(next.position, all[4]!.position) > 0);
        assert.deepEqual(await readAll(store, 10, FEED_START), [all[4], next]);
      }));

    it('deletes only the oldest run of expired events: one it keeps stops it, even where a later one is older', () =>
      withStore(open, async (store) => {
        const { plants, events } = store;
        for (let id = 1; id <= 5; id++) await plants.put({ id, name: `p${id}` });
        const all = await readAll(store);
        // The second event recorded an hour ahead (a clock set back since, or another process's clock).
        await recordedAt(store, all[1]!.id, Date.now() + 3_600_000);
        assert.equal(await events.deleteExpired(Date.now() + 60_000), 1, 'the first alone: the second is kept');
        assert.deepEqual(await readAll(store), all.slice(1), 'no hole: the third and fourth stay behind the second');
        assert.deepEqual(await Promise.all(all.map((event) => events.holds(event.position))), [false, true, true, true, true]);
      }));
  });
}
