import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/store.js';
import type { StoredPlant } from '../../src/model/plant.js';
import type { NewEndpointRecord } from '../../src/store/webhook-store.js';
import { EVENT_TYPES, eventBody, type EventType } from '../../src/model/events.js';
import { newId } from '../../src/model/ids.js';
import { DISABLED_AT_EVENT } from '../../src/model/delivery-reasons.js';
import { until } from '../toolkit.js';

function endpoint(overrides: Partial<NewEndpointRecord> = {}): NewEndpointRecord {
  return {
    id: newId('ep'),
    url: 'https://hooks.example/plants',
    events: [...EVENT_TYPES],
    secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTAx',
    createdAt: Date.now(),
    ...overrides,
  };
}

/** Runs `check` against a fresh store and closes it whatever happens. */
export async function withStore(open: () => Promise<Store>, check: (store: Store) => Promise<void>): Promise<void> {
  const store = await open();
  try {
    await check(store);
  } finally {
    await store.close();
  }
}

/** The webhook part of the store: endpoints, the outbox written with each plant change, claims, attempts. */
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

    it('records attempts: delivered, retried later, failed for good, and 410 disables with a reason', () =>
      withStore(open, async ({ plants, webhooks }) => {
        const e = await webhooks.createEndpoint(endpoint({ events: ['plant.created'] }));
        for (let id = 1; id <= 3; id++) await plants.put({ id, name: `p${id}` });
        const [first, second, third] = await webhooks.claimDue(10, 60_000);
        const now = Date.now();
        await webhooks.recordAttempts(
          [
            { seq: first!.seq, endpointId: e.id, at: now, status: 204, error: null, outcome: 'delivered' },
            { seq: second!.seq, endpointId: e.id, at: now, status: 503, error: 'HTTP 503', outcome: 'retry', nextAttemptAt: now + 60_000 },
            { seq: third!.seq, endpointId: e.id, at: now, status: null, error: 'no answer within 100 ms', outcome: 'failed' },
          ],
          3_600_000,
        );
        const log = (await webhooks.listMessages(e.id, { limit: 10 }))!;
        const byId = new Map(log.map((m) => [m.id, m]));
        assert.deepEqual(byId.get(first!.eventId), {
          ...byId.get(first!.eventId)!,
          status: 'delivered',
          attempts: 1,
          lastAttemptAt: now,
          lastStatus: 204,
          lastError: null,
          nextAttemptAt: null,
        });
        assert.deepEqual(byId.get(second!.eventId), {
          ...byId.get(second!.eventId)!,
          status: 'pending',
          attempts: 1,
          lastStatus: 503,
          lastError: 'HTTP 503',
          nextAttemptAt: now + 60_000,
        });
        assert.deepEqual(byId.get(third!.eventId), {
          ...byId.get(third!.eventId)!,
          status: 'failed',
          attempts: 1,
          lastStatus: null,
          lastError: 'no answer within 100 ms',
        });
        assert.deepEqual(await webhooks.claimDue(10, 60_000), [], 'the retry is not due yet');
        assert.deepEqual(
          (await webhooks.listMessages(e.id, { limit: 10, status: 'failed' }))!.map((m) => m.id),
          [third!.eventId],
        );

        await plants.put({ id: 4, name: 'gone' });
        const [fourth] = await webhooks.claimDue(10, 60_000);
        await webhooks.recordAttempts(
          [
            {
              seq: fourth!.seq,
              endpointId: e.id,
              at: Date.now(),
              status: 410,
              error: 'HTTP 410',
              outcome: 'failed',
              disable: 'the receiver answered 410 Gone',
            },
          ],
          3_600_000,
        );
        const disabled = await webhooks.getEndpoint(e.id);
        assert.equal(disabled?.enabled, false);
        assert.equal(disabled?.disabledReason, 'the receiver answered 410 Gone');
        const enabled = await webhooks.updateEndpoint(e.id, { enabled: true });
        assert.equal(enabled?.enabled, true);
        assert.equal(enabled?.disabledReason, undefined, 'enabling clears the reason');
      }));

    it('disables an endpoint whose deliveries kept failing, with no success, for the configured time', () =>
      withStore(open, async ({ plants, webhooks }) => {
        const e = await webhooks.createEndpoint(endpoint());
        await plants.put({ id: 1, name: 'a' });
        await plants.put({ id: 2, name: 'b' });
        const [one, two] = await webhooks.claimDue(10, 60_000);
        const start = Date.now();
        await webhooks.recordAttempts(
          [{ seq: one!.seq, endpointId: e.id, at: start, status: 500, error: 'HTTP 500', outcome: 'retry', nextAttemptAt: start }],
          1000,
        );
        assert.equal((await webhooks.getEndpoint(e.id))?.enabled, true, 'failing, not yet for long');
        await webhooks.recordAttempts(
          [{ seq: two!.seq, endpointId: e.id, at: start + 1500, status: 500, error: 'HTTP 500', outcome: 'retry', nextAttemptAt: start }],
          1000,
        );
        const disabled = await webhooks.getEndpoint(e.id);
        assert.equal(disabled?.enabled, false);
        assert.match(disabled?.disabledReason ?? '', /failed for .* hours, with no success/);
      }));

    it('a success ends a failure streak', () =>
      withStore(open, async ({ plants, webhooks }) => {
        const e = await webhooks.createEndpoint(endpoint());
        for (let id = 1; id <= 3; id++) await plants.put({ id, name: `p${id}` });
        const [one, two, three] = await webhooks.claimDue(10, 60_000);
        const t = Date.now();
        await webhooks.recordAttempts(
          [{ seq: one!.seq, endpointId: e.id, at: t, status: 500, error: 'HTTP 500', outcome: 'retry', nextAttemptAt: t + 60_000 }],
          1000,
        );
        await webhooks.recordAttempts([{ seq: two!.seq, endpointId: e.id, at: t + 900, status: 204, error: null, outcome: 'delivered' }], 1000);
        await webhooks.recordAttempts(
          [{ seq: three!.seq, endpointId: e.id, at: t + 1500, status: 500, error: 'HTTP 500', outcome: 'retry', nextAttemptAt: t + 60_000 }],
          1000,
        );
        assert.equal((await webhooks.getEndpoint(e.id))?.enabled, true);
      }));

    it('records a batch of attempts of several endpoints in the order given: a delivery restarts the streak, a 410 disables whatever follows', () =>
      withStore(open, async ({ plants, webhooks }) => {
        const restarted = await webhooks.createEndpoint(endpoint());
        const failing = await webhooks.createEndpoint(endpoint());
        const gone = await webhooks.createEndpoint(endpoint());
        for (let id = 1; id <= 3; id++) await plants.put({ id, name: `p${id}` });
        const claimed = await webhooks.claimDue(20, 60_000);
        const of = (endpointId: string) => claimed.filter((m) => m.endpointId === endpointId).map((m) => m.seq);
        const [r1, r2, r3] = of(restarted.id);
        const [f1, f2] = of(failing.id);
        const [g1, g2] = of(gone.id);
        const t = Date.now();
        const retry = (seq: string | undefined, endpointId: string, at: number) =>
          ({ seq: seq!, endpointId, at, status: 500, error: 'HTTP 500', outcome: 'retry', nextAttemptAt: t + 60_000 }) as const;
        const delivered = (seq: string | undefined, endpointId: string, at: number) =>
          ({ seq: seq!, endpointId, at, status: 204, error: null, outcome: 'delivered' }) as const;
        await webhooks.recordAttempts(
          [
            retry(r1, restarted.id, t),
            retry(f1, failing.id, t),
            { seq: g1!, endpointId: gone.id, at: t, status: 410, error: 'HTTP 410', outcome: 'failed', disable: 'the receiver answered 410 Gone' },
            delivered(r2, restarted.id, t + 900),
            delivered(g2, gone.id, t + 950),
            retry(f2, failing.id, t + 1200),
            retry(r3, restarted.id, t + 1500),
          ],
          1000,
        );
        assert.equal((await webhooks.getEndpoint(restarted.id))?.enabled, true, 'its streak began at its last failure, after the delivery');
        const disabled = await webhooks.getEndpoint(failing.id);
        assert.equal(disabled?.enabled, false, 'failing for 1200 ms of a 1000 ms limit, with no success');
        assert.match(disabled?.disabledReason ?? '', /with no success/);
        const goneNow = await webhooks.getEndpoint(gone.id);
        assert.equal(goneNow?.enabled, false, 'a delivery after the 410 does not enable it again');
        assert.equal(goneNow?.disabledReason, 'the receiver answered 410 Gone');
        const messages = await webhooks.listMessages(restarted.id, { limit: 10 });
        assert.deepEqual(messages?.map((m) => [m.status, m.attempts]).sort(), [
          ['delivered', 1],
          ['pending', 1],
          ['pending', 1],
        ]);
        // The streak goes on from where the batch left it: 1500 → 2600 is past the limit.
        await plants.put({ id: 4, name: 'p4' });
        const [next] = (await webhooks.claimDue(20, 60_000)).filter((m) => m.endpointId === restarted.id);
        await webhooks.recordAttempts([retry(next?.seq, restarted.id, t + 2600)], 1000);
        assert.equal((await webhooks.getEndpoint(restarted.id))?.enabled, false);
      }));

    it('pages the deliveries log newest first by webhook-id, from any cursor; an unknown endpoint has none', () =>
      withStore(open, async ({ plants, webhooks }) => {
        const e = await webhooks.createEndpoint(endpoint({ events: ['plant.created'] }));
        for (let id = 1; id <= 5; id++) await plants.put({ id, name: `p${id}` });
        const all = (await webhooks.listMessages(e.id, { limit: 10 }))!;
        assert.equal(all.length, 5);
        const page = (await webhooks.listMessages(e.id, { limit: 2, after: all[1]!.id }))!;
        assert.deepEqual(
          page.map((m) => m.id),
          [all[2]!.id, all[3]!.id],
        );
        assert.deepEqual(await webhooks.listMessages(e.id, { limit: 2, after: 'msg_00000000000000000000000000' }), [], 'nothing is older');
        assert.deepEqual(
          (await webhooks.listMessages(e.id, { limit: 10, after: 'msg_ZZZZZZZZZZZZZZZZZZZZZZZZZZ' }))!.map((m) => m.id),
          all.map((m) => m.id),
        );
        const ids = all.map((m) => m.id);
        assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first is webhook-id order');
        assert.equal(await webhooks.listMessages('ep_nope', { limit: 2 }), undefined);
      }));

    it("replays an endpoint's failed messages from a time window, keeping their webhook-id and attempts", () =>
      withStore(open, async ({ plants, webhooks }) => {
        const e = await webhooks.createEndpoint(endpoint({ events: ['plant.created'] }));
        await plants.put({ id: 1, name: 'early' });
        // The window starts after the first event's time (taken before its commit): the next millisecond.
        const written = Date.now();
        const middle = await until(() => Date.now() > written && Date.now(), 'the clock to pass the first write');
        await plants.put({ id: 2, name: 'in the window' });
        const claimed = await webhooks.claimDue(10, 60_000);
        await webhooks.recordAttempts(
          claimed.map((m) => ({ seq: m.seq, endpointId: e.id, at: Date.now(), status: 500, error: 'HTTP 500', outcome: 'failed' as const })),
          3_600_000,
        );
        assert.equal(await webhooks.replay(e.id, middle, undefined), 1);
        const [again] = await webhooks.claimDue(10, 60_000);
        assert.equal(again?.payload.includes('in the window'), true);
        assert.equal(again?.roundAttempts, 0, 'a replay starts the retry schedule again');
        const log = (await webhooks.listMessages(e.id, { limit: 10 }))!;
        assert.deepEqual(
          log.map((m) => [m.status, m.attempts]),
          [
            ['pending', 1],
            ['failed', 1],
          ],
        );
        assert.equal(await webhooks.replay(e.id, 0, middle - 1), 1, 'the early one, by an until');
        assert.equal(await webhooks.replay('ep_nope', 0, undefined), undefined);
      }));

    it('signs with both secrets for the overlap after a rotation, then with the new one only', () =>
      withStore(open, async ({ plants, webhooks }) => {
        const e = await webhooks.createEndpoint(endpoint({ secret: 'whsec_b2xk' }));
        assert.equal(await webhooks.rotateSecret(e.id, 'whsec_bmV3', Date.now() + 60_000), true);
        await plants.put({ id: 1, name: 'a' });
        assert.deepEqual((await webhooks.claimDue(10, 60_000))[0]?.secrets, ['whsec_bmV3', 'whsec_b2xk']);
        assert.equal(await webhooks.rotateSecret(e.id, 'whsec_bmV3ZXI=', Date.now() - 1), true);
        await plants.put({ id: 2, name: 'b' });
        assert.deepEqual((await webhooks.claimDue(10, 60_000))[0]?.secrets, ['whsec_bmV3ZXI=']);
        assert.equal(await webhooks.rotateSecret('ep_nope', 'whsec_eA==', 0), false);
      }));

    it('deletes delivered and failed messages past retention, never pending ones; deleting an endpoint deletes its messages', () =>
      withStore(open, async ({ plants, webhooks }) => {
        const e = await webhooks.createEndpoint(endpoint({ events: ['plant.created'] }));
        for (let id = 1; id <= 3; id++) await plants.put({ id, name: `p${id}` });
        const [one, two] = await webhooks.claimDue(2, 60_000);
        const old = Date.now() - 10_000;
        await webhooks.recordAttempts(
          [
            { seq: one!.seq, endpointId: e.id, at: old, status: 204, error: null, outcome: 'delivered' },
            { seq: two!.seq, endpointId: e.id, at: old, status: 500, error: 'HTTP 500', outcome: 'failed' },
          ],
          3_600_000,
        );
        assert.equal(await webhooks.deleteExpired(Date.now() - 5000), 2);
        assert.deepEqual(
          (await webhooks.listMessages(e.id, { limit: 10 }))!.map((m) => m.status),
          ['pending'],
        );
        const other = await webhooks.createEndpoint(endpoint());
        await plants.put({ id: 9, name: 'x' });
        await webhooks.deleteEndpoint(other.id);
        assert.equal((await webhooks.claimDue(10, 60_000)).filter((m) => m.endpointId === other.id).length, 0);
      }));
  });
}
