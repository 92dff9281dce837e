import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/store.js';
import { listPlants } from '../helpers.js';
import { ifNoneMatchContract } from './if-none-match-contract.js';
import { plantReadContract } from './plant-read-contract.js';
import { tokenContract } from './token-contract.js';

/**
 * The behaviour every store implementation must have. Each implementation's test file calls this
 * with a function that opens a fresh, empty store: the plant writes here, the reads and the tokens in
 * their own files (plant-read-contract.ts, if-none-match-contract.ts, token-contract.ts), run from here.
 */
export function storeContract(name: string, open: () => Promise<Store>): void {
  describe(`store contract: ${name}`, () => {
    it('creates, reads, replaces and deletes a plant', async () => {
      const store = await open();
      try {
        assert.equal((await store.plants.put({ id: 1, name: 'Fern', tag: 'green' })).outcome, 'created');
        assert.deepEqual((await store.plants.get(1))?.plant, { id: 1, name: 'Fern', tag: 'green' });
        assert.equal((await store.plants.put({ id: 1, name: 'Moss' })).outcome, 'replaced');
        assert.deepEqual((await store.plants.get(1))?.plant, { id: 1, name: 'Moss' });
        assert.equal(await store.plants.delete(1), 'deleted');
        assert.equal(await store.plants.get(1), undefined);
        assert.equal(await store.plants.delete(1), 'not-found');
      } finally {
        await store.close();
      }
    });

    it('counts its write batches and the writes in them: writes made together share a batch', async () => {
      const store = await open();
      try {
        const before = { ...store.writeBatches };
        await store.plants.put({ id: 1, name: 'alone' });
        await Promise.all([2, 3, 4, 5, 6, 7, 8, 9].map((id) => store.plants.put({ id, name: `together ${id}` })));
        const batches = store.writeBatches.batches - before.batches;
        const writes = store.writeBatches.items - before.items;
        assert.ok(writes >= 9, `every write counted: ${writes}`);
        assert.ok(batches >= 2, `the lone write had a batch of its own: ${batches}`);
        assert.ok(batches < writes, `the eight made together shared batches: ${batches} batches for ${writes} writes`);
      } finally {
        await store.close();
      }
    });

    it('keeps int64 edge ids exact, as numbers when safe and bigints beyond', async () => {
      const store = await open();
      try {
        const ids = [-(2n ** 63n), -(2n ** 53n) - 1n, 2n ** 53n + 1n, 2n ** 63n - 1n];
        for (const id of ids) await store.plants.put({ id, name: `p${id}` });
        await store.plants.put({ id: Number.MAX_SAFE_INTEGER, name: 'max safe' });
        await store.plants.put({ id: 0, name: 'zero' });
        for (const id of ids) assert.deepEqual((await store.plants.get(id))?.plant, { id, name: `p${id}` });
        const all = await listPlants(store.plants, { limit: 10 });
        assert.deepEqual(
          all.map((p) => p.id),
          [-(2n ** 63n), -(2n ** 53n) - 1n, 0, Number.MAX_SAFE_INTEGER, 2n ** 53n + 1n, 2n ** 63n - 1n],
        );
      } finally {
        await store.close();
      }
    });

    it('with ifMatch and createOnly together writes nothing: exists when the version matches, else precondition-failed', async () => {
      const store = await open();
      try {
        const { version } = (await store.plants.put({ id: 8, name: 'a' })) as { version: number };
        assert.equal((await store.plants.put({ id: 8, name: 'b' }, { createOnly: true, ifMatch: [version] })).outcome, 'exists');
        assert.equal((await store.plants.put({ id: 8, name: 'b' }, { createOnly: true, ifMatch: '*' })).outcome, 'exists');
        assert.equal((await store.plants.put({ id: 8, name: 'b' }, { createOnly: true, ifMatch: [version + 1] })).outcome, 'precondition-failed');
        assert.equal((await store.plants.put({ id: 9, name: 'b' }, { createOnly: true, ifMatch: '*' })).outcome, 'precondition-failed');
        assert.deepEqual(await store.plants.get(8), { plant: { id: 8, name: 'a' }, version });
        assert.equal(await store.plants.get(9), undefined);
      } finally {
        await store.close();
      }
    });

    it('with createOnly leaves an existing plant as it is', async () => {
      const store = await open();
      try {
        assert.equal((await store.plants.put({ id: 7, name: 'a' }, { createOnly: true })).outcome, 'created');
        assert.equal((await store.plants.put({ id: 7, name: 'b' }, { createOnly: true })).outcome, 'exists');
        assert.deepEqual((await store.plants.get(7))?.plant, { id: 7, name: 'a' });
      } finally {
        await store.close();
      }
    });

    it('applies writes sent together in the order sent, each with its own outcome (group commit)', async () => {
      const store = await open();
      try {
        const { plants } = store;
        await plants.put({ id: 9, name: 'existing' });
        const results = await Promise.all([
          plants.put({ id: 5, name: 'a' }),
          plants.put({ id: 6, name: 'x' }),
          plants.put({ id: 5, name: 'b' }),
          plants.delete(5),
          plants.put({ id: 5, name: 'c' }),
          plants.patch(5, { tag: 't' }),
          plants.put({ id: 5, name: 'd' }, { createOnly: true }),
          plants.put({ id: 9, name: 'replaced' }),
          plants.put({ id: 9, name: 'not at that version' }, { ifMatch: [1_000_000] }),
          plants.delete(404),
          plants.put({ id: 2n ** 63n - 1n, name: 'big' }),
        ]);
        const outcome = (r: unknown) =>
          typeof r === 'string' ? r : ((r as { outcome?: string }).outcome ?? ((r as { plant?: unknown }).plant ? 'patched' : '?'));
        assert.deepEqual(results.map(outcome), [
          'created',
          'created',
          'replaced',
          'deleted',
          'created',
          'patched',
          'exists',
          'replaced',
          'precondition-failed',
          'not-found',
          'created',
        ]);
        const versions = [results[0], results[2], results[4], results[5]].map((r) => (r as { version: number }).version);
        assert.deepEqual(
          [...versions].sort((a, b) => a - b),
          versions,
          'the writes to plant 5 got increasing versions, in the order sent',
        );
        assert.equal(
          new Set(results.flatMap((r) => (typeof r === 'object' && 'version' in r ? [r.version] : []))).size,
          7,
          'every change its own version',
        );
        assert.deepEqual((await plants.get(5))?.plant, { id: 5, name: 'c', tag: 't' });
        assert.deepEqual((await plants.get(9))?.plant, { id: 9, name: 'replaced' });
        assert.deepEqual((await plants.get(6))?.plant, { id: 6, name: 'x' });
      } finally {
        await store.close();
      }
    });

    it('answers every one of many concurrent writes, the same plants written again and again', async () => {
      const store = await open();
      try {
        const writes = Array.from({ length: 500 }, (_, i) => store.plants.put({ id: i % 50, name: `n${i}`, tag: `t${i}` }));
        const results = await Promise.all(writes);
        assert.equal(results.filter((r) => r.outcome === 'created').length, 50);
        assert.equal(results.filter((r) => r.outcome === 'replaced').length, 450);
        for (let id = 0; id < 50; id++) assert.deepEqual((await store.plants.get(id))?.plant, { id, name: `n${450 + id}`, tag: `t${450 + id}` });
        assert.equal(await store.plants.count(), 50);
      } finally {
        await store.close();
      }
    });

    it('patches name and tag, removes a tag with null, and reports a missing plant', async () => {
      const store = await open();
      try {
        await store.plants.put({ id: 3, name: 'a', tag: 't' });
        const patched = async (changes: { name?: string; tag?: string | null }) => {
          const result = await store.plants.patch(3, changes);
          assert.ok(typeof result === 'object', JSON.stringify(result));
          return result.plant;
        };
        assert.deepEqual(await patched({ name: 'b' }), { id: 3, name: 'b', tag: 't' });
        assert.deepEqual(await patched({ tag: null }), { id: 3, name: 'b' });
        assert.deepEqual(await patched({ tag: 'u' }), { id: 3, name: 'b', tag: 'u' });
        assert.deepEqual((await store.plants.get(3))?.plant, { id: 3, name: 'b', tag: 'u' });
        assert.equal(await store.plants.patch(4, { name: 'x' }), 'not-found');
      } finally {
        await store.close();
      }
    });

    it('settles concurrent writes to one id to one whole plant', async () => {
      const store = await open();
      try {
        const writes = Array.from({ length: 50 }, (_, i) => store.plants.put({ id: 99, name: `n${i}`, tag: `t${i}` }));
        const outcomes = await Promise.all(writes);
        assert.equal(outcomes.filter((o) => o.outcome === 'created').length, 1);
        const plant = (await store.plants.get(99))?.plant;
        assert.ok(plant);
        assert.equal(plant.name.slice(1), plant.tag?.slice(1));
        const creates = await Promise.all(Array.from({ length: 20 }, (_, i) => store.plants.put({ id: 100, name: `c${i}` }, { createOnly: true })));
        assert.equal(creates.filter((o) => o.outcome === 'created').length, 1);
      } finally {
        await store.close();
      }
    });

    it('gives every write a new version, never reused, even for the same content or after a delete', async () => {
      const store = await open();
      try {
        const versions: number[] = [];
        const write = async (result: Promise<{ outcome: string; version?: number }>) => {
          const r = await result;
          assert.ok(r.version !== undefined, JSON.stringify(r));
          versions.push(r.version);
        };
        await write(store.plants.put({ id: 1, name: 'a' }));
        await write(store.plants.put({ id: 1, name: 'a' }));
        assert.equal((await store.plants.get(1))?.version, versions[1]);
        const patched = await store.plants.patch(1, {});
        assert.ok(typeof patched === 'object');
        versions.push(patched.version);
        await store.plants.delete(1);
        await write(store.plants.put({ id: 1, name: 'a' }));
        assert.equal(new Set(versions).size, versions.length, `all different: ${versions.join(' ')}`);
        assert.deepEqual(
          [...versions].sort((a, b) => a - b),
          versions,
          'increasing',
        );
      } finally {
        await store.close();
      }
    });

    it('conditional writes: If-Match by version or *, a failed condition changes nothing', async () => {
      const store = await open();
      try {
        const created = await store.plants.put({ id: 5, name: 'v1' });
        assert.equal(created.outcome, 'created');
        const v1 = 'version' in created ? created.version : -1;
        assert.deepEqual(await store.plants.put({ id: 5, name: 'x' }, { ifMatch: [v1 + 1000] }), { outcome: 'precondition-failed' });
        const replaced = await store.plants.put({ id: 5, name: 'v2' }, { ifMatch: [v1 + 1000, v1] });
        assert.equal(replaced.outcome, 'replaced');
        const v2 = 'version' in replaced ? replaced.version : -1;
        assert.ok(v2 > v1);
        assert.deepEqual(
          await store.plants.put({ id: 6, name: 'x' }, { ifMatch: '*' }),
          { outcome: 'precondition-failed' },
          'If-Match: * and no plant',
        );
        assert.equal(await store.plants.get(6), undefined);
        assert.equal(await store.plants.patch(5, { name: 'y' }, { ifMatch: [v1] }), 'precondition-failed');
        assert.equal(await store.plants.patch(6, { name: 'y' }, { ifMatch: '*' }), 'precondition-failed');
        const patched = await store.plants.patch(5, { tag: 't' }, { ifMatch: [v2] });
        assert.ok(typeof patched === 'object');
        assert.deepEqual(patched.plant, { id: 5, name: 'v2', tag: 't' });
        assert.equal(await store.plants.delete(5, { ifMatch: [v2] }), 'precondition-failed');
        assert.equal(await store.plants.delete(6, { ifMatch: '*' }), 'precondition-failed');
        assert.deepEqual((await store.plants.get(5))?.plant, { id: 5, name: 'v2', tag: 't' }, 'nothing changed by a failed condition');
        assert.equal(await store.plants.delete(5, { ifMatch: [patched.version] }), 'deleted');
        assert.deepEqual(
          await store.plants.put({ id: 7, name: 'n' }, { ifMatch: [], createOnly: false }),
          { outcome: 'precondition-failed' },
          'an empty list never matches',
        );
      } finally {
        await store.close();
      }
    });

    it('settles concurrent conditional writes: of N writes with the same If-Match exactly one wins', async () => {
      const store = await open();
      try {
        const created = await store.plants.put({ id: 9, name: 'start' });
        const version = 'version' in created ? created.version : -1;
        const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.plants.put({ id: 9, name: `w${i}` }, { ifMatch: [version] })));
        const winners = results.filter((r) => r.outcome === 'replaced');
        assert.equal(winners.length, 1, JSON.stringify(results));
        const deletes = await Promise.all(Array.from({ length: 10 }, () => store.plants.delete(9, { ifMatch: '*' })));
        assert.equal(deletes.filter((r) => r === 'deleted').length, 1);
      } finally {
        await store.close();
      }
    });
  });
  plantReadContract(name, open);
  ifNoneMatchContract(name, open);
  tokenContract(name, open);
}
