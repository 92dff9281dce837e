import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, it } from 'node:test';
import { Metrics } from '../../src/metrics/registry.js';
import { testApp, TOKEN } from '../helpers.js';
import { parse, valueOf } from './scrape.js';

/** The Idempotency-Key metrics, wired as src/app.ts and src/server.ts wire them: replays, conflicts by reason, keys held. */
it('counts replays and conflicts (409 running, 422 another request), and the keys held', async () => {
  const metrics = new Metrics();
  const t = await testApp(after, { metrics });
  metrics.watchIdempotencyKeys(() => t.store.idempotency.count());
  const read = async () => {
    const { metrics: m } = await parse((await metrics.scrape()).body);
    return {
      replays: valueOf(m, 'plant_store_idempotency_replays_total'),
      running: valueOf(m, 'plant_store_idempotency_conflicts_total', { reason: 'running' }),
      another: valueOf(m, 'plant_store_idempotency_conflicts_total', { reason: 'another-request' }),
      keys: valueOf(m, 'plant_store_idempotency_keys'),
    };
  };
  assert.deepEqual(await read(), { replays: 0, running: 0, another: 0, keys: 0 });
  const post = (body: unknown, key: string) => t.call('POST', '/plants', { body, headers: { 'idempotency-key': key } });
  await post({ id: 1, name: 'a' }, 'one');
  await post({ id: 1, name: 'a' }, 'one');
  await post({ id: 1, name: 'a' }, 'one');
  await post({ id: 1, name: 'b' }, 'one');
  await post({ id: 2, name: 'c' }, 'two');
  // A 409: two imports with one key, both bodies still coming; the second to arrive is refused at once.
  const bodies = [new PassThrough(), new PassThrough()];
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson', 'idempotency-key': 'slow' };
  const answers = bodies.map((body, i) => {
    body.write(`{"id":${3 + i},"name":"d"}\n`);
    return t.app.inject({ method: 'POST', url: '/plants/import', headers, payload: body });
  });
  const refused = await Promise.race(answers.map((answer, i) => answer.then((response) => ({ response, i }))));
  assert.equal(refused.response.statusCode, 409);
  bodies[refused.i]!.end();
  bodies[1 - refused.i]!.end();
  assert.equal((await answers[1 - refused.i]!).statusCode, 200);
  assert.deepEqual(await read(), { replays: 2, running: 1, another: 1, keys: 3 });
});
