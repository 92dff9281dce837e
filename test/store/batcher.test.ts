import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { batcher, type BatchTracer, type Traced } from '../../src/store/batcher.js';

/** The batcher's tracing seam: nothing at all without a tracer; with one, each item's caller kept and each batch run through it. */

interface Item extends Traced {
  n: number;
}

describe('a batcher', () => {
  it('without a tracer leaves its items as they are', async () => {
    const seen: Item[][] = [];
    const b = batcher<Item>({ maxInFlight: 1, maxBatch: 10 }, (batch) => (seen.push(batch), Promise.resolve(undefined)));
    const items = [{ n: 1 }, { n: 2 }];
    for (const item of items) b.add(item);
    await b.idle();
    assert.deepEqual(seen, [[{ n: 1 }, { n: 2 }]]);
    for (const item of items) assert.ok(!('caller' in item), 'no caller slot added');
  });

  it("with a tracer keeps each item's caller as it was when added, and runs every batch through the tracer", async () => {
    let current: object | undefined;
    const runs: Array<{ callers: Array<object | undefined>; outcome: unknown }> = [];
    const tracer: BatchTracer = {
      caller: () => current,
      traceparent: () => '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      run: async (items, run) => {
        const outcome = await run();
        runs.push({ callers: items.map((item) => item.caller), outcome });
        return outcome;
      },
    };
    const failure = new Error('the batch failed');
    const b = batcher<Item>(
      { maxInFlight: 1, maxBatch: 2 },
      (batch) => Promise.resolve(batch.some((item) => item.n === 3) ? failure : undefined),
      tracer,
    );
    const first = { name: 'first request' };
    const second = { name: 'second request' };
    current = first;
    b.add({ n: 1 });
    current = second;
    b.add({ n: 2 });
    current = undefined;
    b.add({ n: 3 });
    await b.idle();
    assert.deepEqual(runs, [
      { callers: [first, second], outcome: undefined },
      { callers: [undefined], outcome: failure },
    ]);
  });
});
