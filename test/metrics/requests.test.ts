import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify';
import { installRequestMetrics } from '../../src/metrics/hooks.js';
import { Metrics } from '../../src/metrics/registry.js';
import { listenForScrapes } from '../../src/metrics/server.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { assertError, tempDir, testApp, assertErrorShape } from '../helpers.js';
import { histogramOf, labelSets, scrape, valueOf } from './scrape.js';

/** The app in-process with metrics on, its store reporting commits, and a real metrics listener on a free port. */
const metrics = new Metrics();
const store = SqliteStore.open(`file:${join(tempDir(after), 'plants.db')}`, {
  synchronous: 'FULL',
  busyTimeoutMs: 5000,
  onCommit: metrics.onCommit,
});
const t = await testApp(after, { store, metrics, config: { webhookAllowPrivateNetworks: true } });
metrics.watchBacklog(() => store.webhooks.countPending());
const listener = await listenForScrapes({ host: '127.0.0.1', port: 0, allowedHosts: [] }, metrics.scrape, (error) =>
  assert.fail(`scrape failed: ${String(error)}`),
);
after(() => listener.close());

const requests = 'http_requests_total';
const durations = 'http_request_duration_seconds';

/** The onResponse hooks an app has (Fastify keeps them under this symbol). */
function onResponseHooks(app: FastifyInstance): number {
  const key = Object.getOwnPropertySymbols(app).find((symbol) => symbol.description === 'fastify.hooks')!;
  return (app as unknown as Record<symbol, { onResponse: unknown[] }>)[key]!.onResponse.length;
}

describe('request metrics, scraped from the metrics listener', () => {
  it('counts answers by method, route template and status: never the raw URL, unknown routes as one label', async () => {
    for (const id of [1, 2]) assert.equal((await t.call('POST', '/plants', { body: { id, name: `p${id}` } })).statusCode, 200);
    assert.equal((await t.call('GET', '/plants/1')).statusCode, 200);
    assert.equal((await t.call('GET', '/plants/2')).statusCode, 200);
    assert.equal((await t.call('GET', '/plants/999')).statusCode, 404);
    assert.equal((await t.call('GET', '/no/such/thing')).statusCode, 404);
    assert.equal((await t.call('GET', '/other?x=1')).statusCode, 404);
    assertError(await t.call('POST', '/plants', { body: { id: 'x', name: 'bad' } }), 400);
    assert.equal((await t.call('DELETE', '/plants')).statusCode, 405);

    const { status, contentType, metrics: m } = await scrape(listener.url);
    assert.equal(status, 200);
    assert.equal(contentType, 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(m[requests]?.type, 'counter');
    assert.equal(valueOf(m, requests, { method: 'POST', route: '/plants', status: '200' }), 2);
    assert.equal(valueOf(m, requests, { method: 'POST', route: '/plants', status: '400' }), 1);
    assert.equal(valueOf(m, requests, { method: 'GET', route: '/plants/:id', status: '200' }), 2);
    assert.equal(valueOf(m, requests, { method: 'GET', route: '/plants/:id', status: '404' }), 1);
    assert.equal(valueOf(m, requests, { method: 'GET', route: 'unmatched', status: '404' }), 2, 'two unknown URLs, one series');
    assert.equal(valueOf(m, requests, { method: 'DELETE', route: 'unmatched', status: '405' }), 1);
    const routes = new Set([...labelSets(m, requests), ...labelSets(m, durations)].map((labels) => labels.route));
    assert.deepEqual([...routes].sort(), ['/plants', '/plants/:id', 'unmatched']);

    const byId = histogramOf(m, durations, { method: 'GET', route: '/plants/:id' })!;
    assert.equal(byId.count, 3, 'a histogram by method and route: every status together');
    assert.ok(byId.sum! > 0 && byId.sum! < 10, `sum ${byId.sum}`);
    assert.ok('0.0005' in byId.buckets && '10' in byId.buckets);
    assert.equal(histogramOf(m, durations, { method: 'POST', route: '/plants' })?.count, 3);
  });

  it('labels a method no route knows as other', async () => {
    assert.equal((await t.app.inject({ method: 'PROPFIND' as InjectOptions['method'], url: '/plants' })).statusCode, 405);
    const { metrics: m } = await scrape(listener.url);
    assert.equal(valueOf(m, requests, { method: 'other', route: 'unmatched', status: '405' }), 1);
  });

  it('counts a URL the router cannot read, answered outside the hooks, as unmatched', async () => {
    assertError(await t.call('GET', '/plants/%zz'), 400);
    assertError(await t.call('GET', `/plants/${'1'.repeat(300)}`), 400);
    const { metrics: m } = await scrape(listener.url);
    assert.equal(valueOf(m, requests, { method: 'GET', route: 'unmatched', status: '400' }), 2);
  });

  it('observes committed batches of writes: sizes and durations move with the writes', async () => {
    const before = (await scrape(listener.url)).metrics;
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.plants.put({ id: 100 + i, name: `batch ${i}` })));
    const now = (await scrape(listener.url)).metrics;
    const sizes = [histogramOf(before, 'plant_store_commit_batch_size')!, histogramOf(now, 'plant_store_commit_batch_size')!];
    const times = [histogramOf(before, 'plant_store_commit_duration_seconds')!, histogramOf(now, 'plant_store_commit_duration_seconds')!];
    const batches = sizes[1]!.count - sizes[0]!.count;
    assert.equal(sizes[1]!.sum! - sizes[0]!.sum!, 20, 'every write counted once');
    assert.ok(batches >= 1 && batches <= 20, `${batches} batches`);
    assert.equal(times[1]!.count - times[0]!.count, batches, 'one duration per batch');
    assert.ok(times[1]!.sum! > times[0]!.sum!);
  });

  it('has the webhook metrics from the start: every outcome at 0, and the backlog counted by the store', async () => {
    let m = (await scrape(listener.url)).metrics;
    for (const outcome of ['delivered', 'retry', 'failed']) assert.equal(valueOf(m, 'plant_store_webhook_deliveries_total', { outcome }), 0, outcome);
    assert.equal(m.plant_store_webhook_backlog?.type, 'gauge');
    assert.equal(valueOf(m, 'plant_store_webhook_backlog'), 0);
    // No dispatcher runs here: the messages wait.
    assert.equal((await t.call('POST', '/webhooks', { body: { url: 'http://127.0.0.1:9/hooks' } })).statusCode, 201);
    for (const id of [201, 202, 203]) await t.call('POST', '/plants', { body: { id, name: 'announced' } });
    m = (await scrape(listener.url)).metrics;
    assert.equal(valueOf(m, 'plant_store_webhook_backlog'), 3);
  });

  it("has Node's default process metrics: event-loop lag, heap, GC, CPU, memory", async () => {
    const { metrics: m, nan } = await scrape(listener.url);
    const present = (name: string) => m[name] !== undefined || nan.some((sample) => sample.startsWith(name));
    for (const name of [
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_heap_space_size_used_bytes',
      'nodejs_gc_duration_seconds',
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
    ]) {
      assert.ok(present(name), name);
    }
    assert.equal(m.nodejs_gc_duration_seconds?.type, 'histogram');
    assert.ok(valueOf(m, 'nodejs_heap_size_used_bytes')! > 1e6);
  });

  it('serves GET and HEAD /metrics only, the Error shape otherwise; the API port has no /metrics', async () => {
    const head = await fetch(listener.url, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    assert.equal((await scrape(`${listener.url}?name[]=x`)).status, 200);
    const wrongPath = await fetch(listener.url.replace('/metrics', '/plants'));
    assert.equal(wrongPath.status, 404);
    assert.match(String(wrongPath.headers.get('content-type')), /^application\/json/);
    assertErrorShape(await wrongPath.json(), 404, 'route_not_found');
    const post = await fetch(listener.url, { method: 'POST', body: '{}' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    assert.equal(((await post.json()) as { error: number }).error, 405);

    assertError(await t.call('GET', '/metrics'), 404);
    assertError(await t.call('GET', '/metrics', { token: null }), 404);
  });

  it('a backlog the store cannot count (an error, or no answer within 2 s) reads NaN, and the scrape still answers', async () => {
    for (const countPending of [() => Promise.reject(new Error('database down')), () => new Promise<number>(() => undefined)]) {
      const broken = new Metrics();
      broken.watchBacklog(countPending);
      const started = Date.now();
      const { status, nan, metrics: m } = await scrape((await serve(broken)).url);
      assert.equal(status, 200);
      // A count that never answers is given up after 2 s: a scrape that waited for it would never end. The
      // bound is generous for a loaded machine and still far short of any time-out a scraper would give up at.
      assert.ok(Date.now() - started < 15_000, 'the scrape does not wait for the database');
      assert.deepEqual(
        nan.filter((sample) => sample.startsWith('plant_store')),
        ['plant_store_webhook_backlog'],
      );
      assert.ok(m.http_requests_total, 'the rest is there');
    }
  });

  it('adds its hook only when metrics are on', async () => {
    const without = await testApp(after);
    assert.equal(onResponseHooks(t.app) - onResponseHooks(without.app), 1);
  });

  it('bounds its series: past the cap, new combinations are counted as other', async () => {
    const bounded = new Metrics();
    const app = Fastify();
    installRequestMetrics(app, bounded);
    const answer = (request: { params: unknown }, reply: { code(status: number): { send(): unknown } }) =>
      reply.code(Number((request.params as { code: string }).code)).send();
    app.route({ method: ['GET', 'POST', 'PUT'], url: '/status/:code', handler: answer });
    after(() => app.close());
    const statuses = Array.from({ length: 400 }, (_, i) => 200 + i);
    // GET and POST with 400 statuses each: 800 series, under the cap of 1000, all kept.
    for (const method of ['GET', 'POST'] as const) for (const code of statuses) await app.inject({ method, url: `/status/${code}` });
    const served = await serve(bounded);
    let m = (await scrape(served.url)).metrics;
    assert.equal(labelSets(m, requests).length, 800);
    // PUT with the same 400: the first 200 reach the cap, the other 200 are counted as one series, other.
    for (const code of statuses) await app.inject({ method: 'PUT', url: `/status/${code}` });
    m = (await scrape(served.url)).metrics;
    assert.equal(labelSets(m, requests).length, 1001);
    assert.equal(valueOf(m, requests, { method: 'PUT', route: '/status/:code', status: '399' }), 1);
    assert.equal(valueOf(m, requests, { method: 'PUT', route: '/status/:code', status: '400' }), undefined);
    assert.equal(valueOf(m, requests, { method: 'other', route: 'other', status: 'other' }), 200);
    assert.equal(histogramOf(m, durations, { method: 'other', route: 'other' })?.count, 200);
  });
});

/** A listener of its own for another registry, closed when the file ends. */
async function serve(other: Metrics) {
  const served = await listenForScrapes({ host: '127.0.0.1', port: 0, allowedHosts: [] }, other.scrape, () => undefined);
  after(() => served.close());
  return served;
}
