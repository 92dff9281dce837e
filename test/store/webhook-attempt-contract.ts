import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/store.js';
import { until } from '../toolkit.js';
import { endpoint, withStore } from './webhook-kit.js';

/** The webhook part of the store, attempts: their records, disabling, the deliveries log, replays, secrets and retention (run by webhookContract). */
export function webhookAttemptContract(name: string, open: () => Promise<Store>): void {
  describe(`webhook store contract, attempts: ${name}`, () => {
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

    it("records an attempt on its own endpoint's message only, though its endpoint was deleted meanwhile and its seq given again", () =>
      withStore(open, async ({ plants, webhooks }) => {
        const gone = await webhooks.createEndpoint(endpoint({ events: ['plant.created'] }));
        await plants.put({ id: 1, name: 'first' });
        const [inFlight] = await webhooks.claimDue(10, 60_000);
        // Deleted while its newest message is being sent: on SQLite the next message may take the same seq.
        assert.equal(await webhooks.deleteEndpoint(gone.id), true);
        const other = await webhooks.createEndpoint(endpoint({ events: ['plant.created'] }));
        await plants.put({ id: 2, name: 'second' });
        const now = Date.now();
        await webhooks.recordAttempts(
          [{ seq: inFlight!.seq, endpointId: gone.id, at: now, status: 204, error: null, outcome: 'delivered' }],
          3_600_000,
        );
        const [message] = (await webhooks.listMessages(other.id, { limit: 10 }))!;
        assert.equal(message?.status, 'pending', "the other endpoint's message is still to be sent");
        assert.equal(message?.attempts, 0);
        const [due] = await webhooks.claimDue(10, 60_000);
        assert.equal(due?.endpointId, other.id);
        await webhooks.recordAttempts(
          [{ seq: due.seq, endpointId: gone.id, at: now, status: null, error: 'no answer', outcome: 'failed' }],
          3_600_000,
        );
        assert.equal((await webhooks.listMessages(other.id, { limit: 10 }))![0]?.attempts, 0, 'nor a failure of the deleted one');
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
