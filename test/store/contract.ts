import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/store.js';

/**
 * The behaviour every store implementation must have. Each implementation's test file calls this
 * with a function that opens a fresh, empty store.
 */
export function storeContract(name: string, open: () => Promise<Store>): void {
  describe(`store contract: ${name}`, () => {
    it('creates, reads, replaces and deletes a plant', async () => {
      const store = await open();
      try {
        assert.equal(await store.plants.put({ id: 1, name: 'Fern', tag: 'green' }), 'created');
        assert.deepEqual(await store.plants.get(1), { id: 1, name: 'Fern', tag: 'green' });
        assert.equal(await store.plants.put({ id: 1, name: 'Moss' }), 'replaced');
        assert.deepEqual(await store.plants.get(1), { id: 1, name: 'Moss' });
        assert.equal(await store.plants.delete(1), true);
        assert.equal(await store.plants.get(1), undefined);
        assert.equal(await store.plants.delete(1), false);
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
        for (const id of ids) assert.deepEqual(await store.plants.get(id), { id, name: `p${id}` });
        const all = await store.plants.list({ limit: 10 });
        assert.deepEqual(
          all.map((p) => p.id),
          [-(2n ** 63n), -(2n ** 53n) - 1n, 0, Number.MAX_SAFE_INTEGER, 2n ** 53n + 1n, 2n ** 63n - 1n],
        );
      } finally {
        await store.close();
      }
    });

    it('with createOnly leaves an existing plant as it is', async () => {
      const store = await open();
      try {
        assert.equal(await store.plants.put({ id: 7, name: 'a' }, { createOnly: true }), 'created');
        assert.equal(await store.plants.put({ id: 7, name: 'b' }, { createOnly: true }), 'exists');
        assert.deepEqual(await store.plants.get(7), { id: 7, name: 'a' });
      } finally {
        await store.close();
      }
    });

    it('pages in id order after a key, filtered by tag', async () => {
      const store = await open();
      try {
        for (let id = 1; id <= 10; id++) await store.plants.put({ id, name: `p${id}`, tag: id % 2 ? 'odd' : 'even' });
        assert.deepEqual(
          (await store.plants.list({ limit: 3, after: 4 })).map((p) => p.id),
          [5, 6, 7],
        );
        assert.deepEqual(
          (await store.plants.list({ limit: 10, tag: 'even', after: 4 })).map((p) => p.id),
          [6, 8, 10],
        );
        assert.deepEqual(await store.plants.list({ limit: 5, after: 10 }), []);
      } finally {
        await store.close();
      }
    });

    it('patches name and tag, removes a tag with null, and reports a missing plant', async () => {
      const store = await open();
      try {
        await store.plants.put({ id: 3, name: 'a', tag: 't' });
        assert.deepEqual(await store.plants.patch(3, { name: 'b' }), { id: 3, name: 'b', tag: 't' });
        assert.deepEqual(await store.plants.patch(3, { tag: null }), { id: 3, name: 'b' });
        assert.deepEqual(await store.plants.patch(3, { tag: 'u' }), { id: 3, name: 'b', tag: 'u' });
        assert.deepEqual(await store.plants.get(3), { id: 3, name: 'b', tag: 'u' });
        assert.equal(await store.plants.patch(4, { name: 'x' }), undefined);
      } finally {
        await store.close();
      }
    });

    it('settles concurrent writes to one id to one whole plant', async () => {
      const store = await open();
      try {
        const writes = Array.from({ length: 50 }, (_, i) => store.plants.put({ id: 99, name: `n${i}`, tag: `t${i}` }));
        const outcomes = await Promise.all(writes);
        assert.equal(outcomes.filter((o) => o === 'created').length, 1);
        const plant = await store.plants.get(99);
        assert.ok(plant);
        assert.equal(plant.name.slice(1), plant.tag?.slice(1));
        const creates = await Promise.all(Array.from({ length: 20 }, (_, i) => store.plants.put({ id: 100, name: `c${i}` }, { createOnly: true })));
        assert.equal(creates.filter((o) => o === 'created').length, 1);
      } finally {
        await store.close();
      }
    });

    it('stores tokens by hash, finds active ones, revokes by id or name', async () => {
      const store = await open();
      try {
        assert.equal(await store.tokens.count(), 0);
        const hash = Buffer.alloc(32, 1);
        const record = await store.tokens.create({ id: 'abc', name: 'ci', hash, scopes: ['plants:read'] });
        assert.equal(record.revokedAt, null);
        const found = await store.tokens.findActiveByHash(hash);
        assert.deepEqual(found?.scopes, ['plants:read']);
        assert.ok(found?.hash.equals(hash));
        await assert.rejects(store.tokens.create({ id: 'abd', name: 'ci', hash: Buffer.alloc(32, 2), scopes: ['plants:read'] }), /already named/);
        assert.equal(await store.tokens.revoke('ci'), true);
        assert.equal(await store.tokens.findActiveByHash(hash), undefined);
        assert.equal(await store.tokens.revoke('abc'), false);
        // A revoked token's name may be used again; both stay listed.
        await store.tokens.create({ id: 'abe', name: 'ci', hash: Buffer.alloc(32, 3), scopes: ['plants:write', 'plants:read'] });
        assert.equal((await store.tokens.list()).length, 2);
        assert.equal(await store.tokens.count(), 2);
        assert.equal(await store.tokens.revoke('abe'), true);
      } finally {
        await store.close();
      }
    });

    it('lists tokens as created: same record, same createdAt, oldest first, never a hash', async () => {
      const store = await open();
      try {
        const first = await store.tokens.create({ id: 'b1', name: 'one', hash: Buffer.alloc(32, 4), scopes: ['plants:read', 'plants:write'] });
        await new Promise((resolve) => setTimeout(resolve, 5));
        const second = await store.tokens.create({ id: 'a2', name: 'two', hash: Buffer.alloc(32, 5), scopes: ['plants:write'] });
        assert.match(first.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        assert.deepEqual(await store.tokens.list(), [first, second]);
        assert.equal(await store.tokens.revoke('one'), true);
        const [revoked] = await store.tokens.list();
        assert.match(revoked?.revokedAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      } finally {
        await store.close();
      }
    });

    it('answers ping while open', async () => {
      const store = await open();
      await store.ping();
      await store.close();
    });
  });
}
