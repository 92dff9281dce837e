import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { PlantExport } from '../../src/store/plant-store.js';
import { testApp } from '../helpers.js';

/**
 * A HEAD of an export answers the export's head and reads no plant: Fastify's HEAD read a streamed answer to
 * its end to throw it away, and twelve HEADs of a 200,000-plant export stalled the store for seconds.
 */
describe('HEAD of an export', async () => {
  const t = await testApp(after);
  for (let id = 1; id <= 3; id++) await t.call('POST', '/plants', { body: { id, name: `Plant ${id}` } });

  // Every snapshot the routes open, and how many of their batches were read.
  const opened: Array<{ batches: number; closed: boolean }> = [];
  const plants = t.store.plants;
  const exportOf = plants.export.bind(plants);
  plants.export = async (...args: Parameters<typeof exportOf>): Promise<PlantExport> => {
    const snapshot = await exportOf(...args);
    const seen = { batches: 0, closed: false };
    opened.push(seen);
    return {
      count: () => snapshot.count(),
      close: () => ((seen.closed = true), snapshot.close()),
      async *[Symbol.asyncIterator]() {
        for await (const batch of snapshot) {
          seen.batches++;
          yield batch;
        }
      },
    };
  };

  for (const [format, type] of [
    ['ndjson', 'application/x-ndjson'],
    ['csv', 'text/csv'],
  ] as const) {
    it(`${format}: the GET's status and type, no body, no plant read, the snapshot closed`, async () => {
      opened.length = 0;
      const head = await t.call('HEAD', `/plants?format=${format}`, { headers: { prefer: 'count=exact' } });
      assert.equal(head.statusCode, 200);
      assert.equal(head.headers['content-type'], `${type}; charset=utf-8`);
      assert.equal(head.headers['x-total-count'], '3');
      assert.equal(head.payload, '');
      assert.deepEqual(opened, [{ batches: 0, closed: true }]);

      const get = await t.call('GET', `/plants?format=${format}`);
      assert.equal(get.headers['content-type'], head.headers['content-type']);
      assert.ok(get.payload.includes('Plant 3'));
      assert.ok(opened[1]!.batches > 0, 'the GET reads them');
    });
  }
});
