import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { Metrics } from '../../src/metrics/registry.js';

import { webhookHarness } from '../webhooks/harness.js';
import { parse, valueOf } from './scrape.js';
import { until } from '../toolkit.js';

/** The dispatcher and the store wired to a registry as src/server.ts wires them, against a real loopback receiver. */
it('counts deliveries by outcome as the dispatcher decides them, and the backlog drains to 0', async () => {
  const { t, receiver, dispatcher, register } = await webhookHarness(after, { dispatcher: { retrySchedule: [0.05] } });
  const metrics = new Metrics();
  dispatcher.onAttempt(metrics.onDeliveryAttempt);
  metrics.watchBacklog(() => t.store.webhooks.countPending());
  const read = async () => {
    const { metrics: m } = await parse((await metrics.scrape()).body);
    const outcome = (name: string) => valueOf(m, 'plant_store_webhook_deliveries_total', { outcome: name });
    return {
      delivered: outcome('delivered'),
      retry: outcome('retry'),
      failed: outcome('failed'),
      backlog: valueOf(m, 'plant_store_webhook_backlog'),
    };
  };

  // Plant 1: 503, then 204 (a retry, then delivered). Plant 2: 503 twice (a retry, then failed: the schedule has one retry).
  receiver.answer = (delivery) => {
    const id = /"id":(\d+)/.exec(delivery.body)?.[1];
    const earlier = receiver.received.filter((d) => /"id":(\d+)/.exec(d.body)?.[1] === id).length;
    return { status: id === '1' && earlier > 1 ? 204 : 503 };
  };
  await register({ events: ['plant.created'] });
  for (const id of [1, 2]) assert.equal((await t.call('POST', '/plants', { body: { id, name: `p${id}` } })).statusCode, 200);
  await receiver.waitFor(4);
  await until(async () => (await read()).backlog === 0, 'the backlog to drain', { timeoutMs: 10_000 });
  assert.deepEqual(await read(), { delivered: 1, retry: 2, failed: 1, backlog: 0 });
});
