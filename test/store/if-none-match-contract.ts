import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FEED_START } from '../../src/store/event-store.js';
import type { Store } from '../../src/store/store.js';

/** The types of the events recorded so far, oldest first. */
async function eventTypes(store: Store): Promise<string[]> {
  const events = await store.events.read({ after: FEED_START, limit: 100 });
  return events.map((event) => (JSON.parse(event.body) as { type: string }).type);
}

/**
 * If-None-Match's versions on a write (ConditionalOptions.ifNoneMatch), which every store settles in the
 * write's own statement or transaction (run by storeContract): a plant at one of them is left as it is.
 */
export function ifNoneMatchContract(name: string, open: () => Promise<Store>): void {
  describe(`store contract: ${name}: writes unless at a version (If-None-Match)`, () => {
    it('refuses a put, patch or delete of a plant at a version named; writes one at another, and creates a missing one', async () => {
      const store = await open();
      try {
        const created = await store.plants.put({ id: 1, name: 'v1' }, { ifNoneMatch: [123456] });
        assert.equal(created.outcome, 'created', 'no plant is at no version');
        const v1 = 'version' in created ? created.version : -1;
        assert.deepEqual(await store.plants.put({ id: 1, name: 'x' }, { ifNoneMatch: [v1 + 1000, v1] }), { outcome: 'precondition-failed' });
        assert.equal(await store.plants.patch(1, { name: 'x' }, { ifNoneMatch: [v1] }), 'precondition-failed');
        assert.equal(await store.plants.delete(1, { ifNoneMatch: [v1] }), 'precondition-failed');
        assert.deepEqual(await store.plants.put({ id: 1, name: 'x' }, { ifMatch: [v1], ifNoneMatch: [v1] }), { outcome: 'precondition-failed' });
        assert.deepEqual((await store.plants.get(1))?.plant, { id: 1, name: 'v1' }, 'nothing changed');
        assert.equal((await store.plants.get(1))?.version, v1);

        const replaced = await store.plants.put({ id: 1, name: 'v2' }, { ifNoneMatch: [v1 + 1000] });
        assert.equal(replaced.outcome, 'replaced');
        const v2 = 'version' in replaced ? replaced.version : -1;
        const patched = await store.plants.patch(1, { tag: 't' }, { ifMatch: [v2], ifNoneMatch: [v1] });
        assert.ok(typeof patched === 'object', JSON.stringify(patched));
        assert.deepEqual(patched.plant, { id: 1, name: 'v2', tag: 't' });
        assert.equal(await store.plants.patch(2, { name: 'x' }, { ifNoneMatch: [v1] }), 'not-found');
        assert.equal(await store.plants.delete(2, { ifNoneMatch: [v1] }), 'not-found');
        assert.equal(await store.plants.delete(1, { ifNoneMatch: [v1, v2] }), 'deleted');
        assert.equal(await store.plants.get(1), undefined);
      } finally {
        await store.close();
      }
    });

    it('records an event only for the writes it made', async () => {
      const store = await open();
      try {
        const created = await store.plants.put({ id: 3, name: 'a' });
        const version = 'version' in created ? created.version : -1;
        await store.plants.put({ id: 3, name: 'b' }, { ifNoneMatch: [version] });
        await store.plants.patch(3, { name: 'b' }, { ifNoneMatch: [version] });
        await store.plants.delete(3, { ifNoneMatch: [version] });
        assert.deepEqual(await eventTypes(store), ['plant.created'], 'no event for a refused write');
        await store.plants.put({ id: 4, name: 'new' }, { ifNoneMatch: [version] });
        await store.plants.put({ id: 4, name: 'newer' }, { ifNoneMatch: [version] });
        assert.deepEqual(await eventTypes(store), ['plant.created', 'plant.created', 'plant.updated']);
      } finally {
        await store.close();
      }
    });
  });
}
