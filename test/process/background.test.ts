import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { webhookDeliveries } from '../../src/process/background.js';
import type { Store } from '../../src/store/store.js';
import { DeliveryThread } from '../../src/webhooks/delivery-thread.js';
import { Sender } from '../../src/webhooks/delivery.js';
import { testApp } from '../helpers.js';
import { endpoint } from '../store/webhook-kit.js';

/**
 * Webhook deliveries as a serving process's service (process/background.ts): where the store has endpoints,
 * the sender loads its HTTP client as the service starts (before the process is ready), not at the first
 * delivery; a store without endpoints loads nothing; a client that cannot load does not stop the start.
 */

/** Counts the senders' warm-ups (both kinds: which one runs depends on the machine's cores). */
function countWarmUps(t: TestContext, warmUp: () => Promise<void> = () => Promise.resolve()): { count: number } {
  const seen = { count: 0 };
  const counted = () => {
    seen.count++;
    return warmUp();
  };
  t.mock.method(Sender.prototype, 'warmUp', counted);
  t.mock.method(DeliveryThread.prototype, 'warmUp', counted);
  return seen;
}

async function addEndpoint(store: Store): Promise<void> {
  await store.webhooks.createEndpoint(endpoint());
}

describe('webhook deliveries, started as a service', () => {
  it('warm the sender up where the store has an endpoint, and only there', async (t) => {
    const seen = countWarmUps(t);
    const { app, store } = await testApp(after);
    const config = loadConfig({});
    const none = webhookDeliveries(config, { store, app });
    await none.start?.();
    await none.stop?.();
    assert.equal(seen.count, 0, 'no endpoint: nothing loaded until one is added');
    await addEndpoint(store);
    const some = webhookDeliveries(config, { store, app });
    await some.start?.();
    await some.stop?.();
    assert.equal(seen.count, 1, 'an endpoint: warmed up as the service starts');
  });

  it('a client that cannot load does not stop the start', async (t) => {
    const seen = countWarmUps(t, () => Promise.reject(new Error('undici is missing')));
    const { app, store } = await testApp(after);
    await addEndpoint(store);
    const service = webhookDeliveries(loadConfig({}), { store, app });
    await service.start?.();
    await service.stop?.();
    assert.equal(seen.count, 1);
  });
});
