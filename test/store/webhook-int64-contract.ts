import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/store.js';
import type { NewEndpointRecord } from '../../src/store/webhook-store.js';
import { EVENT_TYPES } from '../../src/model/events.js';
import { newId } from '../../src/model/ids.js';
import { withStore } from './webhook-kit.js';

function endpoint(overrides: Partial<NewEndpointRecord> = {}): NewEndpointRecord {
  return {
    id: newId('ep'),
    url: 'https://hooks.example/plants',
    events: [...EVENT_TYPES],
    secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTAx',
    createdAt: 1_700_000_000_000,
    ...overrides,
  };
}

/**
 * An endpoint's int64 setting as the store keeps it (the column int64_strings): shown as `int64:
 * 'string'` when set, absent otherwise (numbers, the default), changed by updateEndpoint, and handed to
 * the sender with each claimed message, while the outbox keeps the one body, ids as JSON integers.
 */
export function webhookInt64Contract(name: string, open: () => Promise<Store>): void {
  describe(`webhook store contract, int64 strings: ${name}`, () => {
    it('keeps the setting: absent unless strings, read back, listed, changed, kept by other changes', () =>
      withStore(open, async ({ webhooks }) => {
        const plain = await webhooks.createEndpoint(endpoint());
        const number = await webhooks.createEndpoint(endpoint({ int64: 'number' }));
        const strings = await webhooks.createEndpoint(endpoint({ int64: 'string', description: 'browser' }));
        assert.equal('int64' in plain, false);
        assert.equal('int64' in number, false);
        assert.deepEqual(strings, {
          id: strings.id,
          url: 'https://hooks.example/plants',
          events: [...EVENT_TYPES],
          description: 'browser',
          int64: 'string',
          enabled: true,
          createdAt: 1_700_000_000_000,
        });
        assert.deepEqual(await webhooks.getEndpoint(strings.id), strings);
        assert.deepEqual(
          (await webhooks.listEndpoints({ limit: 10 })).map((e) => [e.id, e.int64]),
          [plain, number, strings].map((e) => [e.id, e.int64]).sort(),
        );

        assert.equal((await webhooks.updateEndpoint(plain.id, { int64: 'string' }))?.int64, 'string');
        assert.equal((await webhooks.getEndpoint(plain.id))?.int64, 'string');
        const other = await webhooks.updateEndpoint(plain.id, { url: 'https://other.example/x', description: 'd', enabled: false });
        assert.equal(other?.int64, 'string', 'other changes keep it');
        assert.equal((await webhooks.updateEndpoint(plain.id, { enabled: true }))?.int64, 'string');
        const back = await webhooks.updateEndpoint(plain.id, { int64: 'number' });
        assert.equal(back && 'int64' in back, false);
        assert.equal((await webhooks.updateEndpoint(strings.id, { description: null }))?.int64, 'string');
      }));

    it("hands each claimed message the endpoint's setting as it is at the claim; the outbox keeps one body, ids as integers", () =>
      withStore(open, async ({ plants, webhooks }) => {
        const strings = await webhooks.createEndpoint(endpoint({ int64: 'string' }));
        const numbers = await webhooks.createEndpoint(endpoint());
        await plants.put({ id: 2n ** 63n - 1n, name: 'Max' });
        const claimed = await webhooks.claimDue(10, 60_000);
        assert.equal(claimed.length, 2);
        const of = (id: string) => claimed.find((m) => m.endpointId === id)!;
        assert.equal(of(strings.id).int64, 'string');
        assert.equal('int64' in of(numbers.id), false);
        assert.equal(of(strings.id).payload, of(numbers.id).payload, 'one body in the outbox');
        assert.match(of(strings.id).payload, /"data":\{"id":9223372036854775807,/);

        // Changed while messages wait: the next claim carries the new setting.
        await webhooks.releaseClaims(claimed.map((m) => m.seq));
        await webhooks.updateEndpoint(strings.id, { int64: 'number' });
        await webhooks.updateEndpoint(numbers.id, { int64: 'string' });
        const again = await webhooks.claimDue(10, 60_000);
        assert.equal(again.length, 2);
        assert.equal('int64' in again.find((m) => m.endpointId === strings.id)!, false);
        assert.equal(again.find((m) => m.endpointId === numbers.id)!.int64, 'string');
      }));
  });
}
