import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/store.js';
import { until } from '../toolkit.js';

/** The tokens every store keeps alike, and its ping (run by storeContract). */
export function tokenContract(name: string, open: () => Promise<Store>): void {
  describe(`store contract, tokens: ${name}`, () => {
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

    it('reads a token by id, active or revoked; revokes by id alone when asked (a name equal to the id left alone)', async () => {
      const store = await open();
      try {
        const target = await store.tokens.create({ id: 'c1', name: 'target', hash: Buffer.alloc(32, 6), scopes: ['tokens:manage'] });
        const namesake = await store.tokens.create({ id: 'c2', name: 'c1', hash: Buffer.alloc(32, 7), scopes: ['plants:read'] });
        assert.deepEqual(await store.tokens.get('c1'), target);
        assert.equal(await store.tokens.get('target'), undefined, 'by id, not by name');
        assert.equal(await store.tokens.get('nobody'), undefined);
        assert.equal(await store.tokens.revoke('target', { byId: true }), false, 'a name is not an id');
        assert.equal(await store.tokens.revoke('c1', { byId: true }), true);
        assert.equal((await store.tokens.get('c2'))?.revokedAt, null, 'the token named c1 is active still');
        assert.match((await store.tokens.get('c1'))?.revokedAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        assert.equal(await store.tokens.revoke('c1', { byId: true }), false, 'revoked already');
        assert.deepEqual(await store.tokens.get('c2'), namesake);
      } finally {
        await store.close();
      }
    });

    it("revokes one token by id or name: an active token's id before a name equal to it, the name once no active token has that id", async () => {
      const store = await open();
      try {
        const target = await store.tokens.create({ id: 'd1', name: 'admin', hash: Buffer.alloc(32, 8), scopes: ['tokens:manage'] });
        const namesake = await store.tokens.create({ id: 'd2', name: 'd1', hash: Buffer.alloc(32, 9), scopes: ['plants:read'] });
        assert.equal(await store.tokens.revoke('d1'), true);
        assert.notEqual((await store.tokens.get(target.id))?.revokedAt, null, 'the token with the id is revoked');
        assert.deepEqual(await store.tokens.get(namesake.id), namesake, 'the token named like it is left active');
        // Its id now names no active token: the name matches.
        assert.equal(await store.tokens.revoke('d1'), true);
        assert.notEqual((await store.tokens.get(namesake.id))?.revokedAt, null);
        assert.equal(await store.tokens.revoke('d1'), false);
      } finally {
        await store.close();
      }
    });

    it('lists tokens as created: same record, same createdAt, oldest first, never a hash', async () => {
      const store = await open();
      try {
        const first = await store.tokens.create({ id: 'b1', name: 'one', hash: Buffer.alloc(32, 4), scopes: ['plants:read', 'plants:write'] });
        // The second a millisecond later at least, so that createdAt orders them.
        await until(() => Date.now() > Date.parse(first.createdAt), 'the clock to pass the first token');
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

    it('answers ping while open, and no longer once closed: a ping asks the database', async () => {
      const store = await open();
      await store.ping();
      await store.close();
      await assert.rejects(store.ping());
    });
  });
}
