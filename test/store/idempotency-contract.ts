import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FEED_START } from '../../src/store/event-store.js';
import { slot, type AnswerRecipe, type KeyClaim, type StoredAnswer } from '../../src/store/idempotency.js';
import type { Store } from '../../src/store/store.js';
import { newId } from '../../src/model/ids.js';
import { withStore } from './webhook-contract.js';

/**
 * Answers kept for Idempotency-Keys (store/idempotency.ts), the same on every store: kept with the write
 * in its transaction, the write made once per key (however many callers at once), the earlier answer
 * back instead, keys per owner, expiry and the sweep, and a keyed import's conflict kept with nothing else.
 */

const json = (status: number, body: string, headers: Record<string, string> = {}): StoredAnswer => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body,
});

const PUT_ANSWERS: AnswerRecipe<'put'> = {
  created: json(200, '{"made":"created"}', { etag: `"${slot('version')}"` }),
  replaced: json(200, '{"made":"replaced"}', { etag: `"${slot('version')}"` }),
  exists: json(412, '{"error":412}'),
  'precondition-failed': json(412, '{"error":412,"message":"if-match"}'),
};

function claim(key: string, overrides: Partial<KeyClaim> = {}): KeyClaim {
  return { owner: 'token-a', key, fingerprint: `fp-${key}`, ttlMs: 60_000, ...overrides };
}

async function events(store: Store): Promise<number> {
  return (await store.events.read({ after: FEED_START, limit: 1000 })).length;
}

export function idempotencyContract(name: string, open: () => Promise<Store>): void {
  describe(`idempotency store contract: ${name}`, () => {
    it('keeps the answer of the outcome with the write, its values filled in, and finds it', () =>
      withStore(open, async (store) => {
        const kept = await store.idempotency.put({ id: 1, name: 'a' }, {}, { ...claim('k'), answers: PUT_ANSWERS });
        const version = (await store.plants.get(1))!.version;
        assert.deepEqual(kept, { ...json(200, '{"made":"created"}', { etag: `"${version}"` }), fingerprint: 'fp-k', earlier: false });
        assert.deepEqual(await store.idempotency.find('token-a', 'k'), { ...kept, earlier: true });
        assert.equal(await store.idempotency.find('token-b', 'k'), undefined, 'keys are per owner');
        assert.equal(await store.idempotency.find('token-a', 'other'), undefined);
        assert.equal(await store.idempotency.count(), 1);
      }));

    it('makes no write for a key that has an answer: the earlier answer comes back, whatever the request', () =>
      withStore(open, async (store) => {
        const first = await store.idempotency.put({ id: 1, name: 'a' }, {}, { ...claim('k'), answers: PUT_ANSWERS });
        const again = await store.idempotency.put({ id: 1, name: 'changed' }, {}, { ...claim('k', { fingerprint: 'other' }), answers: PUT_ANSWERS });
        assert.deepEqual(again, { ...first, earlier: true });
        assert.equal((await store.plants.get(1))!.plant.name, 'a');
        assert.equal(await events(store), 1);
        // Another owner's key of the same name is its own.
        const theirs = await store.idempotency.put({ id: 1, name: 'b' }, {}, { ...claim('k', { owner: 'token-b' }), answers: PUT_ANSWERS });
        assert.equal(theirs.earlier, false);
        assert.equal(theirs.body, '{"made":"replaced"}');
      }));

    it('writes once when many callers with one key arrive together', () =>
      withStore(open, async (store) => {
        const kept = await Promise.all(
          Array.from({ length: 10 }, (_, i) => store.idempotency.put({ id: 7, name: `n${i}` }, {}, { ...claim('herd'), answers: PUT_ANSWERS })),
        );
        assert.equal(kept.filter((k) => !k.earlier).length, 1);
        assert.equal(new Set(kept.map((k) => k.headers.etag)).size, 1);
        assert.equal(await events(store), 1);
      }));

    it("keeps the answer a write decided without writing (412), and a webhook write's", () =>
      withStore(open, async (store) => {
        await store.plants.put({ id: 1, name: 'there' });
        const refused = await store.idempotency.put({ id: 1, name: 'x' }, { createOnly: true }, { ...claim('c'), answers: PUT_ANSWERS });
        assert.deepEqual([refused.status, refused.body], [412, '{"error":412}']);
        const id = newId('ep');
        const endpoint = { id, url: 'https://hooks.example/x', events: ['plant.created' as const], secret: 'whsec_x', createdAt: Date.now() };
        const created = await store.idempotency.createEndpoint(endpoint, { ...claim('e'), answers: { created: json(201, `{"id":"${id}"}`) } });
        assert.equal(created.status, 201);
        const twice = await store.idempotency.createEndpoint(
          { ...endpoint, id: newId('ep') },
          { ...claim('e'), answers: { created: json(201, '{}') } },
        );
        assert.deepEqual([twice.earlier, twice.body], [true, `{"id":"${id}"}`]);
        assert.equal((await store.webhooks.listEndpoints({ limit: 10 })).length, 1);
        const rotate = { rotated: json(200, 'rotated'), 'not-found': json(404, 'gone') };
        assert.equal((await store.idempotency.rotateSecret(id, 'whsec_y', 0, { ...claim('r'), answers: rotate })).body, 'rotated');
        assert.equal((await store.idempotency.rotateSecret('ep_none', 'whsec_y', 0, { ...claim('r2'), answers: rotate })).status, 404);
        const replay = { requeued: json(202, `{"requeued":${slot('requeued')}}`), 'not-found': json(404, 'gone') };
        assert.equal((await store.idempotency.replay(id, 0, undefined, { ...claim('p'), answers: replay })).body, '{"requeued":0}');
      }));

    it('forgets an answer past its time to live: the write is made again; the sweep deletes it', () =>
      withStore(open, async (store) => {
        await store.idempotency.put({ id: 1, name: 'a' }, {}, { ...claim('short', { ttlMs: 1 }), answers: PUT_ANSWERS });
        await store.idempotency.put({ id: 2, name: 'b' }, {}, { ...claim('long'), answers: PUT_ANSWERS });
        await new Promise((resolve) => setTimeout(resolve, 20));
        assert.equal(await store.idempotency.find('token-a', 'short'), undefined);
        assert.equal(await store.idempotency.count(), 1);
        const again = await store.idempotency.put({ id: 1, name: 'a' }, {}, { ...claim('short', { ttlMs: 1 }), answers: PUT_ANSWERS });
        assert.deepEqual([again.earlier, again.body], [false, '{"made":"replaced"}']);
        await new Promise((resolve) => setTimeout(resolve, 20));
        assert.equal(await store.idempotency.deleteExpired(), 1);
        assert.equal(await store.idempotency.deleteExpired(), 0);
        assert.ok(await store.idempotency.find('token-a', 'long'));
      }));

    it('keeps a keyed import with its answer; a create-only conflict keeps its answer and nothing else; an answered key stores nothing', () =>
      withStore(open, async (store) => {
        const answers = {
          imported: json(200, `{"created":${slot('created')},"replaced":${slot('replaced')}}`),
          conflict: json(409, `{"id":${slot('id')}}`),
        };
        const first = await store.plants.startImport();
        await first.add([{ id: 1, name: 'a' }]);
        assert.equal((await first.commitKept({ createOnly: false }, { ...claim('i'), answers })).body, '{"created":1,"replaced":0}');
        await first.abort();
        const again = await store.plants.startImport();
        await again.add([{ id: 2, name: 'b' }]);
        const earlier = await again.commitKept({ createOnly: false }, { ...claim('i'), answers });
        await again.abort();
        assert.deepEqual([earlier.earlier, earlier.body], [true, '{"created":1,"replaced":0}']);
        assert.equal(await store.plants.get(2), undefined, 'the staged rows dropped');
        const conflict = await store.plants.startImport();
        await conflict.add([
          { id: 3, name: 'c' },
          { id: 1, name: 'exists' },
        ]);
        const refused = await conflict.commitKept({ createOnly: true }, { ...claim('c'), answers });
        await conflict.abort();
        assert.deepEqual([refused.status, refused.body], [409, '{"id":1}']);
        assert.equal(await store.plants.get(3), undefined);
        assert.equal((await store.plants.get(1))!.plant.name, 'a');
        assert.equal((await store.idempotency.find('token-a', 'c'))?.status, 409);
        // The store still takes writes and imports (nothing left half done).
        const last = await store.plants.startImport();
        await last.add([{ id: 2, name: 'b' }]);
        assert.deepEqual(await last.commit({ createOnly: false }), { created: 1, replaced: 0 });
      }));
  });
}
