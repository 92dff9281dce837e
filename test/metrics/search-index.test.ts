import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { Metrics } from '../../src/metrics/registry.js';
import { openSqlite, tempDir } from '../helpers.js';

import { parse, valueOf } from './scrape.js';
import { until } from '../toolkit.js';

/** The search index's lag, wired as src/server.ts wires it: read from the store at each scrape. */
it('reports how far the search index is behind the writes, in changes and seconds, and 0 once it caught up', async () => {
  const store = openSqlite(tempDir(after));
  after(() => store.close());
  const metrics = new Metrics();
  metrics.watchSearchIndex(() => store.searchIndex.lag());
  const read = async () => {
    const { metrics: m } = await parse((await metrics.scrape()).body);
    return { events: valueOf(m, 'plant_store_search_index_lag_events'), seconds: valueOf(m, 'plant_store_search_index_lag_seconds') };
  };
  assert.deepEqual(await read(), { events: 0, seconds: 0 });
  await Promise.all(Array.from({ length: 50 }, (_, i) => store.plants.put({ id: i + 1, name: `Ficus ${i}` })));
  const { events, seconds } = await read();
  assert.ok(events !== undefined && events >= 0 && events <= 50, `events ${events}`);
  assert.ok(seconds !== undefined && seconds >= 0 && seconds < 10, `seconds ${seconds}`);
  await until(async () => (await read()).events === 0, 'the index to catch up', { timeoutMs: 10_000 });
  assert.deepEqual(await read(), { events: 0, seconds: 0 });
});

it('reads NaN when the store does not answer, rather than failing the scrape', async () => {
  const metrics = new Metrics();
  metrics.watchSearchIndex(() => Promise.reject(new Error('the database is down')));
  const { body } = await metrics.scrape();
  assert.match(body, /^plant_store_search_index_lag_events nan$/im);
  assert.match(body, /^plant_store_search_index_lag_seconds nan$/im);
});
