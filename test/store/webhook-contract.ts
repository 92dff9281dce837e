import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/store.js';
import type { StoredPlant } from '../../src/model/plant.js';
import type { WebhookEndpoint } from '../../src/store/webhook-store.js';
import { EVENT_TYPES, eventBody, type EventType } from '../../src/model/events.js';
import { DISABLED_AT_EVENT } from '../../src/model/delivery-reasons.js';
import { until } from '../toolkit.js';
import { endpoint, withStore } from './webhook-kit.js';
import { webhookAttemptContract } from './webhook-attempt-contract.js';

/** The webhook part of the store: endpoints, the outbox written with each plant change, claims (and, run from here, attempts: webhook-attempt-contract.ts). */
export function webhookContract(name: string, open: () => Promise<Store>): void {
  describe(`webhook store contract: ${name}`, () => {
    it('creates, reads, lists in id order, changes and deletes endpoints', () =>
      withStore(open, async ({ webhooks }) => {
        const a = await webhooks.createEndpoint(endpoint({ description: 'shop front', createdAt: 1_700_000_000_123 }));
        assert.deepEqual(a, {
          id: a.id,
          url: 'https://hooks.example/plants',
          events: [...EVENT_TYPES],
          description: 'shop front',
          enabled: true,
          createdAt: 1_700_000_000_123,
        });
        const b = await webhooks.createEndpoint(endpoint({ events: ['plant.deleted'] }));
        const c = await webhooks.createEndpoint(endpoint());
        assert.deepEqual(await webhooks.getEndpoint(b.id), b);
        assert.equal(await webhooks.getEndpoint('ep_nope'), undefined);
        const ids = [a.id, b.id, c.id].sort();
        assert.deepEqual(
          (await webhooks.listEndpoints({ limit: 10 })).map((e) => e.id),
          ids,
        );
        assert.deepEqual(
          (await webhooks.listEndpoints({ limit: 1, after: ids[0] })).map((e) => e.id),
          [ids[1]],
        );

        const changed = await webhooks.updateEndpoint(a.id, { url: 'https://other.example/x', events: ['plant.created'], description: null });
        assert.deepEqual(changed, { id: a.id, url: 'https://other.example/x', events: ['plant.created'], enabled: true, createdAt: a.createdAt });
        assert.equal((await webhooks.updateEndpoint(a.id, { enabled: false }))?.enabled, false);
        assert.equal(await webhooks.updateEndpoint('ep_nope', { enabled: false }), undefined);
        assert.equal(await webhooks.deleteEndpoint(b.id), true);
        assert.equal(await webhooks.deleteEndpoint(b.id), false);
        assert.equal(await webhooks.getEndpoint(b.id), undefined);
      }));

    it('changes or deletes an endpoint only while it is as expected (If-Match), in the write itself', () =>
      withStore(open, async ({ webhooks }) => {
        const read = await webhooks.createEndpoint(endpoint({ description: 'shop front' }));
        const changed = (result: WebhookEndpoint | undefined | 'changed'): WebhookEndpoint => {
          assert.ok(typeof result === 'object', `changed: ${JSON.stringify(result)}`);
          return result;
        };
        const kept = changed(await webhooks.updateEndpoint(read.id, { enabled: false }, read));
        assert.deepEqual(kept, { ...read, enabled: false });
        // `read` is stale now: every field a read shows counts, the service's own changes too.
        assert.equal(await webhooks.updateEndpoint(read.id, { description: 'mine' }, read), 'changed');
        assert.equal(await webhooks.deleteEndpoint(read.id, read), 'changed');
        assert.deepEqual(await webhooks.getEndpoint(read.id), kept, 'nothing done');
        for (const stale of [
          { url: 'https://else.example/x' },
          { events: ['plant.created' as const] },
          { description: undefined },
          { int64: 'string' as const },
        ]) {
          assert.equal(await webhooks.updateEndpoint(read.id, { enabled: true }, { ...kept, ...stale }), 'changed', JSON.stringify(stale));
        }
        const described = changed(await webhooks.updateEndpoint(read.id, { description: null, int64: 'string' }, kept));
        assert.deepEqual(described, { id: read.id, url: read.url, events: read.events, int64: 'string', enabled: false, createdAt: read.createdAt });
        assert.equal(await webhooks.updateEndpoint(read.id, { enabled: true }, { ...described, description: 'x' }), 'changed', 'description null');
        assert.equal(await webhooks.deleteEndpoint(read.id, described), true);
        // Gone: not found, whatever was expected.
        assert.equal(await webhooks.updateEndpoint(read.id, { enabled: true }, described), undefined);
        assert.equal(await webhooks.deleteEndpoint(read.id, described), false);
      }));

    it('rotates a secret or replays only while the endpoint is as expected (If-Match); a rotation changes the endpoint as read', () =>
      withStore(open, async ({ webhooks }) => {
        const read = await webhooks.createEndpoint(endpoint());
        assert.equal(read.previousSecretUntil, undefined, 'never rotated');
        const until = Date.now() + 60_000;
        assert.equal(await webhooks.rotateSecret(read.id, 'whsec_b25l', until, read), true);
        const rotated = await webhooks.getEndpoint(read.id);
        assert.deepEqual(rotated, { ...read, previousSecretUntil: until }, 'the rotation shows: another ETag');
        // `read` is stale now, for every write that judges it.
        assert.equal(await webhooks.rotateSecret(read.id, 'whsec_dHdv', until + 1, read), 'changed');
        assert.equal(await webhooks.replay(read.id, 0, undefined, read), 'changed');
        assert.equal(await webhooks.updateEndpoint(read.id, { description: 'mine' }, read), 'changed');
        assert.equal(await webhooks.deleteEndpoint(read.id, read), 'changed');
        assert.deepEqual(await webhooks.getEndpoint(read.id), rotated, 'nothing done');
        assert.equal(await webhooks.replay(read.id, 0, undefined, rotated), 0);
        assert.equal(await webhooks.replay(read.id, 0, undefined, undefined), 0, 'no expectation: whatever it is');
        assert.equal(await webhooks.rotateSecret(read.id, 'whsec_dHdv', until + 1, undefined), true);
        // Gone: not found, whatever was expected.
        assert.equal(await webhooks.deleteEndpoint(read.id), true);
        assert.equal(await webhooks.rotateSecret(read.id, 'whsec_dGhyZWU=', until, rotated), false);
        assert.equal(await webhooks.replay(read.id, 0, undefined, rotated), undefined);
      }));

    it('of rotations sent at once with one expectation, one is done and the others find it changed', () =>
      withStore(open, async ({ webhooks }) => {
        const read = await webhooks.createEndpoint(endpoint());
        const at = Date.now();
        const results = await Promise.all([1, 2, 3, 4].map((n) => webhooks.rotateSecret(read.id, `whsec_${n}AAA`, at + n, read)));
        assert.deepEqual(results.map(String).sort(), ['changed', 'changed', 'changed', 'true']);
        const won = results.indexOf(true) + 1;
        assert.equal((await webhooks.getEndpoint(read.id))?.previousSecretUntil, at + won, 'the one done is the one kept');
      }));

    it('queues one message per subscribed endpoint in the write that changes a plant, and none for a write that changes nothing', () =>
      withStore(open, async ({ plants, webhooks }) => {
        let woken = 0;
        webhooks.onQueued(() => woken++);
        // No endpoint: nothing is queued, nothing wakes.
        await plants.put({ id: 1, name: 'before any endpoint' });
        assert.equal(woken, 0);
        const all = await webhooks.createEndpoint(endpoint());
        const deletes = await webhooks.createEndpoint(endpoint({ events: ['plant.deleted'] }));
        const before = Date.now();
        await plants.put({ id: 2n ** 63n - 1n, name: 'Max', tag: 'big' });
        await plants.put({ id: 2n ** 63n - 1n, name: 'Max', tag: 'big' }, { createOnly: true }); // exists: nothing
        await plants.put({ id: 2n ** 63n - 1n, name: 'Max II' });
        await plants.patch(2n ** 63n - 1n, { tag: 'patched' });
        await plants.patch(404, { name: 'missing' }); // nothing
        await plants.delete(404); // nothing
        await plants.delete(2n ** 63n - 1n);
        assert.ok(woken >= 1, 'this process was told messages were queued');

        const log = (await webhooks.listMessages(all.id, { limit: 10 }))!;
        assert.deepEqual(
          log.map((m) => [m.type, m.status, m.attempts]),
          [
            ['plant.deleted', 'pending', 0],
            ['plant.updated', 'pending', 0],
            ['plant.updated', 'pending', 0],
            ['plant.created', 'pending', 0],
          ],
          'newest first',
        );
        for (const m of log) {
          assert.match(m.id, /^msg_[0-9A-Z]{26}$/);
          assert.equal(m.plantId, 2n ** 63n - 1n, 'the plant the event is about, exact');
          assert.ok(m.occurredAt >= before - 1000 && m.occurredAt <= Date.now() + 1000);
          assert.equal(m.lastAttemptAt, null);
          assert.equal(m.lastStatus, null);
        }
        const onlyDeletes = (await webhooks.listMessages(deletes.id, { limit: 10 }))!;
        assert.equal(onlyDeletes.length, 1);
        assert.equal(onlyDeletes[0]!.id, log[0]!.id, 'one event, one webhook-id, whatever the endpoint');

        const claimed = await webhooks.claimDue(10, 60_000);
        assert.equal(claimed.length, 5);
        const payloads = claimed.filter((m) => m.endpointId === all.id).map((m) => JSON.parse(m.payload.replace(/"id":(-?\d+)/, '"id":"$1"')));
        assert.deepEqual(
          payloads.map((p) => [p.type, p.data]),
          [
            ['plant.created', { id: '9223372036854775807', name: 'Max', tag: 'big' }],
            ['plant.updated', { id: '9223372036854775807', name: 'Max II' }],
            ['plant.updated', { id: '9223372036854775807', name: 'Max II', tag: 'patched' }],
            ['plant.deleted', { id: '9223372036854775807' }],
          ],
        );
        for (const m of claimed) {
          assert.match(
            m.payload,
            /^\{"type":"plant\.[a-z]+","timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z","data":\{"id":9223372036854775807[,}]/,
          );
          assert.deepEqual(m.secrets, ['whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTAx']);
          assert.equal(m.roundAttempts, 0);
        }
      }));

    it('announces an imported plant with the very bytes a single write of it announces (the body and the webhook-id made the same way)', () =>
      withStore(open, async ({ plants, webhooks }) => {
        const hook = await webhooks.createEndpoint(endpoint());
        await plants.put({ id: 5, name: 'replaced by the import' });
        const rows: StoredPlant[] = [
          { id: 5, name: 'Fünf "quoted" \\ back\u0001slash', tag: '' },
          { id: -(2n ** 63n), name: 'Min \u2028 line sep </script>', tag: 'émoji 🌿' },
          { id: 2n ** 63n - 1n, name: 'Max' },
          { id: 0, name: '\u007f\u0000'.replace('\u0000', '\t'), tag: '\n\r' },
          { id: 9007199254740993n, name: 'Beyond 2^53' },
        ];
        const before = Date.now();
        const importing = await plants.startImport();
        await importing.add(rows);
        await importing.commit({ createOnly: false });
        const claimed = (await webhooks.claimDue(100, 60_000)).filter((m) => m.endpointId === hook.id);
        // The put before the import, then one message per imported plant.
        assert.equal(claimed.length, 1 + rows.length);
        const imported = claimed.filter((m) => !m.payload.includes('replaced by the import'));
        const byId = new Map(imported.map((m) => [/"data":\{"id":(-?\d+)/.exec(m.payload)![1]!, m]));
        for (const plant of rows) {
          const message = byId.get(String(plant.id));
          assert.ok(message, `a message for plant ${plant.id}`);
          const { type, timestamp } = JSON.parse(message.payload.replace(/"data":.*$/, '"data":0}')) as { type: EventType; timestamp: string };
          assert.equal(type, plant.id === 5 ? 'plant.updated' : 'plant.created');
          assert.equal(message.payload, eventBody({ type, plant }, new Date(timestamp)), `plant ${plant.id}: the bytes of eventBody`);
          assert.ok(Date.parse(timestamp) >= before - 1000 && Date.parse(timestamp) <= Date.now() + 1000, timestamp);
          assert.match(message.eventId, /^msg_[0-9A-HJKMNP-TV-Z]{26}$/, 'a ULID, as src/model/ids.ts makes them');
        }
        assert.equal(new Set(imported.map((m) => m.eventId)).size, imported.length, 'one webhook-id per event');

        // And what a single write of the same plant sends, but for its own time.
        for (const plant of rows) await plants.put(plant);
        const single = (await webhooks.claimDue(100, 60_000)).filter((m) => m.endpointId === hook.id);
        assert.equal(single.length, rows.length);
        const untimed = (payload: string) => payload.replace(/"timestamp":"[^"]*"/, '"timestamp":""').replace('plant.created', 'plant.updated');
        for (const m of single) {
          const id = /"data":\{"id":(-?\d+)/.exec(m.payload)![1]!;
          assert.equal(untimed(byId.get(id)!.payload), untimed(m.payload), `plant ${id}: import and single write agree`);
        }
      }));

    it('counts the pending messages of every endpoint: the backlog', () =>
      withStore(open, async ({ plants, webhooks }) => {
        assert.equal(await webhooks.countPending(), 0);
        const a = await webhooks.createEndpoint(endpoint());
        const b = await webhooks.createEndpoint(endpoint({ events: ['plant.created'] }));
        for (let id = 1; id <= 3; id++) await plants.put({ id, name: `p${id}` });
        await plants.put({ id: 1, name: 'again' }); // an update: only a subscribes
        assert.equal(await webhooks.countPending(), 7);
        const claimed = await webhooks.claimDue(10, 60_000);
        assert.equal(await webhooks.countPending(), 7, 'claimed, leased, still pending');
        const [first, second, third] = claimed.filter((m) => m.endpointId === a.id);
        const now = Date.now();
        await webhooks.recordAttempts(
          [
            { seq: first!.seq, endpointId: a.id, at: now, status: 204, error: null, outcome: 'delivered' },
            { seq: second!.seq, endpointId: a.id, at: now, status: 503, error: 'HTTP 503', outcome: 'retry', nextAttemptAt: now + 60_000 },
            { seq: third!.seq, endpointId: a.id, at: now, status: null, error: 'no answer', outcome: 'failed' },
          ],
          3_600_000,
        );
        assert.equal(await webhooks.countPending(), 5, 'delivered and failed ones leave the backlog; a retry stays');
        await webhooks.updateEndpoint(b.id, { enabled: false });
        await plants.put({ id: 4, name: 'while b is off' });
        assert.equal(await webhooks.countPending(), 6, "b's event is failed at once; a's is pending");
        await webhooks.deleteEndpoint(a.id);
        assert.equal(await webhooks.countPending(), 3, "b's pending messages wait while it is disabled");
      }));

    it('records an event for a disabled endpoint as failed, and never claims it', () =>
      withStore(open, async ({ plants, webhooks }) => {
        const off = await webhooks.createEndpoint(endpoint());
        await webhooks.updateEndpoint(off.id, { enabled: false });
        await plants.put({ id: 7, name: 'while disabled' });
        const [message] = (await webhooks.listMessages(off.id, { limit: 10 }))!;
        assert.equal(message?.status, 'failed');
        assert.equal(message?.lastError, DISABLED_AT_EVENT);
        assert.deepEqual(await webhooks.claimDue(10, 60_000), []);
      }));

    it('claims a message for one dispatcher at a time until its lease passes; pending messages of a disabled endpoint wait', () =>
      withStore(open, async ({ plants, webhooks }) => {
        const e = await webhooks.createEndpoint(endpoint());
        await plants.put({ id: 1, name: 'a' });
        assert.equal((await webhooks.claimDue(10, 300)).length, 1);
        assert.equal((await webhooks.claimDue(10, 300)).length, 0, 'leased');
        // Claimable again once the 300 ms lease has passed (asked until then, it stays leased: nothing is claimed).
        const again = await until(async () => {
          const claimed = await webhooks.claimDue(10, 60_000);
          return claimed.length > 0 ? claimed : undefined;
        }, 'the lease to pass');
        assert.equal(again.length, 1, 'the lease passed: claimed again');
        await webhooks.updateEndpoint(e.id, { enabled: false });
        await plants.put({ id: 2, name: 'b' }); // failed at once: disabled
        await webhooks.recordAttempts(
          [{ seq: again[0]!.seq, endpointId: e.id, at: Date.now(), status: 500, error: 'HTTP 500', outcome: 'retry', nextAttemptAt: Date.now() - 1 }],
          3_600_000,
        );
        assert.equal((await webhooks.claimDue(10, 60_000)).length, 0, 'disabled: its pending message waits');
        await webhooks.updateEndpoint(e.id, { enabled: true });
        assert.equal((await webhooks.claimDue(10, 60_000)).length, 1, 'enabled again: it flows');
      }));

    it('gives back claimed messages that were not sent: claimable again at once, and a message recorded meanwhile stays recorded', () =>
      withStore(open, async ({ plants, webhooks }) => {
        const e = await webhooks.createEndpoint(endpoint());
        for (let id = 1; id <= 3; id++) await plants.put({ id, name: `p${id}` });
        const claimed = await webhooks.claimDue(10, 600_000);
        assert.equal(claimed.length, 3);
        assert.equal((await webhooks.claimDue(10, 600_000)).length, 0, 'leased');
        const [sent, ...unsent] = claimed;
        await webhooks.recordAttempts([{ seq: sent!.seq, endpointId: e.id, at: Date.now(), status: 204, error: null, outcome: 'delivered' }], 1000);
        await webhooks.releaseClaims([]);
        await webhooks.releaseClaims(claimed.map((m) => m.seq));
        const again = await webhooks.claimDue(10, 600_000);
        assert.deepEqual(
          again.map((m) => m.seq),
          unsent.map((m) => m.seq),
          'the unsent ones, in their order; the delivered one is not pending',
        );
      }));
  });
  webhookAttemptContract(name, open);
}
