import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FEED_START } from '../../src/store/event-store.js';
import type { KeyClaim } from '../../src/store/idempotency.js';
import { sweepExpired } from '../../src/store/idempotency-sweep.js';
import type { Write } from '../../src/store/writes.js';
import type { PutOptions, Store } from '../../src/store/store.js';
import type { StoredPlant } from '../../src/model/plant.js';
import { newId } from '../../src/model/ids.js';
import { withStore } from './webhook-kit.js';
import { until } from '../toolkit.js';

/**
 * Idempotency-Keys as the store keeps them (store/idempotency.ts), the same on every store: each write made
 * under a claim keeps its outcome (data, no HTTP) in its transaction, made once per key however many
 * callers at once, the earlier outcome back instead; keys per owner; expiry, and the sweep in bounded
 * batches that writes pass between; a keyed import's conflict kept with nothing else.
 */

function claim(key: string, overrides: Partial<KeyClaim> = {}): KeyClaim {
  return { owner: 'token-a', key, fingerprint: `fp-${key}`, ttlMs: 60_000, ...overrides };
}

function put(plant: StoredPlant, options: PutOptions = {}): Write<'put'> {
  return { kind: 'put', input: { plant, createOnly: options.createOnly === true, ifMatch: options.ifMatch } };
}

async function events(store: Store): Promise<number> {
  return (await store.events.read({ after: FEED_START, limit: 1000 })).length;
}

export function idempotencyContract(name: string, open: () => Promise<Store>): void {
  describe(`idempotency store contract: ${name}`, () => {
    it('keeps the outcome of the write with it, and finds it', () =>
      withStore(open, async (store) => {
        const made = await store.writes.apply(put({ id: 1, name: 'a' }), claim('k'));
        const version = (await store.plants.get(1))!.version;
        assert.deepEqual(made, { kind: 'put', outcome: { outcome: 'created', version }, fingerprint: 'fp-k', replayed: false });
        assert.deepEqual(await store.idempotency.find('token-a', 'k'), { ...made, replayed: true });
        assert.equal(await store.idempotency.find('token-b', 'k'), undefined, 'keys are per owner');
        assert.equal(await store.idempotency.find('token-a', 'other'), undefined);
        assert.equal(await store.idempotency.count(), 1);
      }));

    it('makes no write for a key that has an outcome: the earlier outcome comes back, whatever the request', () =>
      withStore(open, async (store) => {
        const first = await store.writes.apply(put({ id: 1, name: 'a' }), claim('k'));
        const again = await store.writes.apply(put({ id: 1, name: 'changed' }), claim('k', { fingerprint: 'other' }));
        assert.deepEqual(again, { ...first, replayed: true });
        assert.equal((await store.plants.get(1))!.plant.name, 'a');
        assert.equal(await events(store), 1);
        // Another owner's key of the same name is its own.
        const theirs = await store.writes.apply(put({ id: 1, name: 'b' }), claim('k', { owner: 'token-b' }));
        assert.equal(theirs.replayed, false);
        assert.equal((theirs.outcome as { outcome: string }).outcome, 'replaced');
      }));

    it('writes once when many callers with one key arrive together', () =>
      withStore(open, async (store) => {
        const made = await Promise.all(Array.from({ length: 10 }, (_, i) => store.writes.apply(put({ id: 7, name: `n${i}` }), claim('herd'))));
        assert.equal(made.filter((m) => !m.replayed).length, 1);
        assert.equal(new Set(made.map((m) => JSON.stringify(m.outcome))).size, 1);
        assert.equal(await events(store), 1);
      }));

    it("keeps the outcome a write decided without writing (412), and each webhook write's: the endpoint with its secret, the rotation, the replay", () =>
      withStore(open, async (store) => {
        await store.plants.put({ id: 1, name: 'there' });
        const refused = await store.writes.apply(put({ id: 1, name: 'x' }, { createOnly: true }), claim('c'));
        assert.deepEqual(refused.outcome, { outcome: 'exists' });
        const failed = await store.writes.apply(put({ id: 1, name: 'x' }, { ifMatch: [999_999] }), claim('m'));
        assert.deepEqual(failed.outcome, { outcome: 'precondition-failed' });
        assert.equal((await store.plants.get(1))!.plant.name, 'there');
        const id = newId('ep');
        const endpoint = { id, url: 'https://hooks.example/x', events: ['plant.created' as const], secret: 'whsec_x', createdAt: Date.now() };
        const created = await store.writes.apply({ kind: 'createEndpoint', input: { endpoint } }, claim('e'));
        assert.deepEqual(created, { kind: 'createEndpoint', outcome: endpoint, fingerprint: 'fp-e', replayed: false });
        const twice = await store.writes.apply(
          {
            kind: 'createEndpoint',
            input: { endpoint: { ...endpoint, id: newId('ep'), secret: 'whsec_z' } },
          },
          claim('e'),
        );
        assert.deepEqual(twice, { ...created, replayed: true });
        assert.equal((await store.webhooks.listEndpoints({ limit: 10 })).length, 1);
        const rotate = (key: string, endpointId: string) =>
          store.writes.apply({ kind: 'rotateSecret', input: { id: endpointId, secret: `whsec_${key}`, previousUntil: 0 } }, claim(key));
        assert.deepEqual((await rotate('r', id)).outcome, { secret: 'whsec_r' });
        assert.deepEqual((await rotate('r', id)).outcome, { secret: 'whsec_r' }, 'the first rotation, not a second');
        assert.equal((await rotate('r2', 'ep_none')).outcome, 'not-found');
        const replay = (key: string, endpointId: string) =>
          store.writes.apply({ kind: 'replay', input: { endpointId, since: 0, until: undefined } }, claim(key));
        assert.deepEqual((await replay('p', id)).outcome, { requeued: 0 });
        assert.equal((await replay('p2', 'ep_none')).outcome, 'not-found');
        // If-Match judged in the write (an expectation the endpoint no longer meets): the refusal did nothing and
        // keeps nothing under its key (the release before knows no such outcome); a retry is judged again.
        const stale = { ...(await store.webhooks.getEndpoint(id))!, url: 'https://hooks.example/before' };
        const refusedRotation = () =>
          store.writes.apply({ kind: 'rotateSecret', input: { id, secret: 'whsec_c3RhbGU=', previousUntil: 1, expected: stale } }, claim('r3'));
        assert.deepEqual(await refusedRotation(), { kind: 'rotateSecret', outcome: 'changed', fingerprint: 'fp-r3', replayed: false });
        assert.deepEqual(await refusedRotation(), { kind: 'rotateSecret', outcome: 'changed', fingerprint: 'fp-r3', replayed: false });
        assert.equal(await store.idempotency.find('token-a', 'r3'), undefined);
        const refusedReplay = await store.writes.apply(
          { kind: 'replay', input: { endpointId: id, since: 0, until: undefined, expected: stale } },
          claim('p3'),
        );
        assert.equal(refusedReplay.outcome, 'changed');
        assert.equal(await store.idempotency.find('token-a', 'p3'), undefined);
        // The key is free: the same key's write, once it holds, is made and kept.
        const rotated = await store.writes.apply({ kind: 'rotateSecret', input: { id, secret: 'whsec_bm93', previousUntil: 1 } }, claim('r3'));
        assert.deepEqual(rotated, { kind: 'rotateSecret', outcome: { secret: 'whsec_bm93' }, fingerprint: 'fp-r3', replayed: false });
      }));

    it('forgets an outcome past its time to live: the write is made again; the count leaves it out; the sweep deletes it', () =>
      withStore(open, async (store) => {
        await store.writes.apply(put({ id: 1, name: 'a' }), claim('short', { ttlMs: 1 }));
        await store.writes.apply(put({ id: 2, name: 'b' }), claim('long'));
        const expired = (key: string) => async () => (await store.idempotency.find('token-a', key)) === undefined;
        await until(expired('short'), 'the 1 ms outcome to expire');
        assert.equal(await store.idempotency.count(), 1);
        const again = await store.writes.apply(put({ id: 1, name: 'a' }), claim('short', { ttlMs: 1 }));
        assert.deepEqual([again.replayed, (again.outcome as { outcome: string }).outcome], [false, 'replaced']);
        await until(expired('short'), 'the 1 ms outcome to expire again');
        const taken = await store.writes.apply(put({ id: 1, name: 'c' }), claim('short', { ttlMs: 60_000, fingerprint: 'new' }));
        assert.deepEqual([taken.replayed, taken.fingerprint], [false, 'new'], 'an expired key is taken over');
        assert.equal(await store.idempotency.count(), 2);
        await store.writes.apply(put({ id: 3, name: 'c' }), claim('third', { ttlMs: 1 }));
        await until(expired('third'), 'the third outcome to expire');
        assert.equal(await store.idempotency.count(), 2);
        assert.equal(await store.idempotency.deleteExpired(10), 1);
        assert.equal(await store.idempotency.deleteExpired(10), 0);
        assert.equal(await store.idempotency.count(), 2);
        assert.ok(await store.idempotency.find('token-a', 'long'));
      }));

    it('sweeps every expired outcome in bounded batches, keeps the others, and lets a write through while it sweeps', () =>
      withStore(open, async (store) => {
        const expired = 1000;
        for (let start = 0; start < expired; start += 100) {
          await Promise.all(
            Array.from({ length: 100 }, (_, i) => store.writes.apply(put({ id: start + i, name: 'x' }), claim(`e${start + i}`, { ttlMs: 1 }))),
          );
        }
        for (let i = 0; i < 3; i++) await store.writes.apply(put({ id: 5000 + i, name: 'kept' }), claim(`kept${i}`));
        await until(async () => (await store.idempotency.count()) === 3, 'the 1 ms outcomes to expire');
        const batches: number[] = [];
        // The sweep is held after its first batch until the write is done: a sweep holding a lock across its
        // batches would block the write, and the test would fail by its time-out (an event, not a race of speeds).
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        const counted = {
          deleteExpired: async (limit: number) => {
            const n = await store.idempotency.deleteExpired(limit);
            batches.push(n);
            if (batches.length === 1) await held;
            return n;
          },
        };
        let swept = false;
        const sweep = sweepExpired(counted, 10).then((result) => ((swept = true), result));
        await until(() => batches.length === 1, 'the sweep to delete its first batch');
        await store.plants.put({ id: 9999, name: 'written during the sweep' });
        assert.equal(swept, false, 'the write did not wait for the whole sweep');
        release();
        assert.deepEqual(await sweep, { deleted: expired, batches: batches.length });
        assert.ok(batches.length > expired / 10, `${batches.length} batches`);
        assert.ok(
          batches.every((n) => n <= 10),
          'none deleted more than its limit',
        );
        assert.equal(await store.idempotency.count(), 3);
        for (let i = 0; i < 3; i++) assert.ok(await store.idempotency.find('token-a', `kept${i}`));
        assert.deepEqual(await sweepExpired(store.idempotency, 10), { deleted: 0, batches: 1 });
        assert.equal((await store.plants.get(9999))!.plant.name, 'written during the sweep');
      }));

    it('keeps a keyed import with its outcome; a create-only conflict keeps its outcome and nothing else; an answered key stores nothing', () =>
      withStore(open, async (store) => {
        const imported = async (key: string, rows: StoredPlant[], createOnly = false) => {
          const session = await store.plants.startImport();
          try {
            await session.add(rows);
            return await store.writes.apply({ kind: 'import', input: { session, createOnly } }, claim(key));
          } finally {
            await session.abort();
          }
        };
        const first = await imported('i', [{ id: 1, name: 'a' }]);
        assert.deepEqual(first, { kind: 'import', outcome: { created: 1, replaced: 0 }, fingerprint: 'fp-i', replayed: false });
        assert.deepEqual(await imported('i', [{ id: 2, name: 'b' }]), { ...first, replayed: true });
        assert.equal(await store.plants.get(2), undefined, 'the staged rows dropped');
        const big = 2n ** 62n + 1n;
        const refused = await imported(
          'c',
          [
            { id: 3, name: 'c' },
            { id: 1, name: 'exists' },
          ],
          true,
        );
        assert.deepEqual(refused.outcome, { conflict: '1' });
        assert.equal(await store.plants.get(3), undefined);
        assert.equal((await store.plants.get(1))!.plant.name, 'a');
        assert.deepEqual((await store.idempotency.find('token-a', 'c'))?.outcome, { conflict: '1' });
        // An int64 id beyond 2^53 is kept exactly (as decimal text).
        await store.plants.put({ id: big, name: 'big' });
        assert.deepEqual((await imported('big', [{ id: big, name: 'again' }], true)).outcome, { conflict: String(big) });
        // The store still takes writes and imports (nothing left half done).
        const last = await store.plants.startImport();
        await last.add([{ id: 2, name: 'b' }]);
        assert.deepEqual(await last.commit({ createOnly: false }), { created: 1, replaced: 0 });
      }));
  });
}
