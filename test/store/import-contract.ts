import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FEED_START } from '../../src/store/event-store.js';
import type { ImportResult, Store } from '../../src/store/store.js';
import type { StoredPlant } from '../../src/model/plant.js';
import { EVENT_TYPES } from '../../src/model/events.js';
import { newId } from '../../src/model/ids.js';
import { listPlants } from '../helpers.js';
import { withStore } from './webhook-kit.js';

/** Chunks with an id twice in one chunk and ids again in later chunks: the last row of each id wins. */
const CHUNKS: StoredPlant[][] = [
  [
    { id: 3, name: 'three, first' },
    { id: 1, name: 'one', tag: 'a' },
    { id: 3, name: 'three, second', tag: 'x' },
  ],
  [
    { id: 2, name: 'two' },
    { id: 1, name: 'one, again' },
  ],
  [
    { id: 3, name: 'three, last' },
    { id: -(2n ** 63n), name: 'min' },
    { id: 2n ** 63n - 1n, name: 'max', tag: '' },
  ],
];
const STORED = [
  { id: -(2n ** 63n), name: 'min' },
  { id: 1, name: 'one, again' },
  { id: 2, name: 'two' },
  { id: 3, name: 'three, last' },
  { id: 2n ** 63n - 1n, name: 'max', tag: '' },
];
const OTHER: StoredPlant = { id: 1000, name: 'not in the import' };

/** `[type, data with the id as text]` of an event or message body. */
const summary = (body: string) => {
  const { type, data } = JSON.parse(body.replace(/"id":(-?\d+)/, '"id":"$1"')) as { type: string; data: unknown };
  return [type, data];
};

interface Outcome {
  result: ImportResult;
  plants: StoredPlant[];
  events: unknown[];
  messages: unknown[];
}

/** Imports CHUNKS with one subscriber, and says what was stored, recorded and queued (OTHER's own event and message left out). */
async function importChunks(store: Store, createOnly: boolean): Promise<Outcome> {
  await store.webhooks.createEndpoint({
    id: newId('ep'),
    url: 'https://hooks.example/plants',
    events: [...EVENT_TYPES],
    secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTAx',
    createdAt: Date.now(),
  });
  const session = await store.plants.startImport();
  for (const chunk of CHUNKS) await session.add(chunk);
  const result = await session.commit({ createOnly });
  const notOther = (body: string) => !body.includes('not in the import');
  const events = (await store.events.read({ after: FEED_START, limit: 100 })).map((e) => e.body).filter(notOther);
  const messages = (await store.webhooks.claimDue(100, 60_000)).map((m) => m.payload).filter(notOther);
  return {
    result,
    plants: (await listPlants(store.plants, { limit: 100 })).filter((p) => p.id !== OTHER.id),
    events: events.map(summary),
    messages: messages.map(summary).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
  };
}

/**
 * Bulk imports into an empty store take a shorter way (a plain insert, every plant created): the same
 * stored plants, events, messages and counts as into a store that holds other plants.
 */
export function importContract(name: string, open: () => Promise<Store>): void {
  describe(`import contract: ${name}`, () => {
    it('stores, records and queues the same into an empty store as into one holding other plants', async () => {
      let empty: Outcome | undefined;
      let holding: Outcome | undefined;
      await withStore(open, async (store) => {
        empty = await importChunks(store, false);
      });
      await withStore(open, async (store) => {
        await store.plants.put(OTHER);
        holding = await importChunks(store, false);
        assert.deepEqual((await store.plants.get(OTHER.id))?.plant, OTHER);
      });
      assert.deepEqual(empty!.result, { created: 5, replaced: 0 });
      assert.deepEqual(empty!.plants, STORED);
      assert.deepEqual(
        empty!.events,
        STORED.map((p) => ['plant.created', { ...p, id: String(p.id) }]),
        'one event per plant, in id order',
      );
      assert.equal(empty!.messages.length, STORED.length, 'one message per plant');
      assert.deepEqual(holding, empty);
    });

    it('imports create-only into an empty store, duplicates across chunks included', () =>
      withStore(open, async (store) => {
        const outcome = await importChunks(store, true);
        assert.deepEqual(outcome.result, { created: 5, replaced: 0 });
        assert.deepEqual(outcome.plants, STORED);
      }));

    it('replaces a plant written by someone else during an import begun in an empty store, and create-only refuses it', () =>
      withStore(open, async (store) => {
        const refused = await store.plants.startImport();
        for (const chunk of CHUNKS) await refused.add(chunk);
        await store.plants.put({ id: 2, name: 'written meanwhile' });
        await assert.rejects(refused.commit({ createOnly: true }), (e: Error) => e.name === 'ImportConflictError' && e.message.includes('id 2'));
        await refused.abort();
        assert.deepEqual(await listPlants(store.plants, { limit: 100 }), [{ id: 2, name: 'written meanwhile' }], 'nothing of the refused import');

        await store.plants.delete(2);
        const session = await store.plants.startImport();
        for (const chunk of CHUNKS) await session.add(chunk);
        await store.plants.put({ id: 2, name: 'written meanwhile' });
        assert.deepEqual(await session.commit({ createOnly: false }), { created: 4, replaced: 1 });
        assert.deepEqual(await listPlants(store.plants, { limit: 100 }), STORED);
        const events = (await store.events.read({ after: FEED_START, limit: 100 })).map((e) => summary(e.body));
        assert.deepEqual(events.slice(3), [
          ['plant.created', { id: String(-(2n ** 63n)), name: 'min' }],
          ['plant.created', { id: '1', name: 'one, again' }],
          ['plant.updated', { id: '2', name: 'two' }],
          ['plant.created', { id: '3', name: 'three, last' }],
          ['plant.created', { id: String(2n ** 63n - 1n), name: 'max', tag: '' }],
        ]);
      }));

    it('create-only names the smallest of the stored ids it meets, on every store', () =>
      withStore(open, async (store) => {
        for (const id of [50, 7, 30]) await store.plants.put({ id, name: `stored ${id}` });
        const session = await store.plants.startImport();
        // More rows than the store holds, in descending order: the order a join without one would meet them in.
        await session.add(Array.from({ length: 200 }, (_, i) => ({ id: 200 - i, name: `imported ${200 - i}` })));
        await assert.rejects(session.commit({ createOnly: true }), (e: Error) => e.name === 'ImportConflictError' && /\bid 7\b/.test(e.message));
        await session.abort();
      }));

    it('leaves an empty store empty when an import is aborted', () =>
      withStore(open, async (store) => {
        const session = await store.plants.startImport();
        for (const chunk of CHUNKS) await session.add(chunk);
        await session.abort();
        assert.deepEqual(await listPlants(store.plants, { limit: 100 }), []);
        assert.deepEqual(await store.events.read({ after: FEED_START, limit: 10 }), []);
        const next = await store.plants.startImport();
        await next.add([{ id: 7, name: 'seven' }]);
        assert.deepEqual(await next.commit({ createOnly: true }), { created: 1, replaced: 0 });
        assert.deepEqual(await listPlants(store.plants, { limit: 100 }), [{ id: 7, name: 'seven' }]);
      }));
  });
}
