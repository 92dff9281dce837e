import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from '../helpers.js';
import { request, startServer, type ServerProcess } from '../process.js';
import { histogramOf, scrape, valueOf } from './scrape.js';
import { until } from '../toolkit.js';

const TOKEN = 'metrics-process-token-0123456789abc';
const METRICS_LINE = /metrics listening at (http:\/\/[^\s"]+)/;

/** The metrics URL the process named in its log (METRICS_PORT=0 binds a free port). */
async function metricsUrl(server: ServerProcess): Promise<string> {
  let url: string | undefined;
  await until(() => (url = METRICS_LINE.exec(server.stdout + server.stderr)?.[1]) !== undefined, 'the metrics address', { timeoutMs: 10_000 });
  return url!;
}

/** A POST on a connection of its own, so that the cluster hands each to the next worker in turn. */
function postAlone(url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}/plants`,
      { method: 'POST', agent: false, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } },
      (res) => (res.resume(), resolve(res.statusCode ?? 0)),
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('metrics in the real process', () => {
  it('serves the separate port (METRICS_PORT=0: a free one, named in the log); the API port has none; a graceful stop closes it', async () => {
    const startedBefore = Math.floor(Date.now() / 1000);
    const server = await startServer(after, {
      env: { DATABASE_URL: `file:${join(tempDir(after), 'p.db')}`, PLANT_STORE_TOKENS: TOKEN, METRICS_PORT: '0' },
    });
    const url = await metricsUrl(server);
    assert.notEqual(new URL(url).port, String(server.port));
    assert.equal(new URL(url).hostname, '127.0.0.1', 'METRICS_HOST defaults to loopback');

    assert.equal((await request(`${server.url}/plants`, { method: 'POST', token: TOKEN, body: '{"id":7,"name":"Monstera"}' })).status, 200);
    assert.equal((await request(`${server.url}/plants/7`, { token: TOKEN })).status, 200);
    const onApi = await request(`${server.url}/metrics`, { token: TOKEN });
    assert.equal(onApi.status, 404);
    assert.deepEqual(JSON.parse(onApi.text), { error: 404, message: 'no such resource: GET /metrics', code: 'route_not_found' });

    const { status, metrics: m } = await scrape(url);
    assert.equal(status, 200);
    assert.equal(valueOf(m, 'http_requests_total', { method: 'POST', route: '/plants', status: '200' }), 1);
    assert.equal(valueOf(m, 'http_requests_total', { method: 'GET', route: '/plants/:id', status: '200' }), 1);
    assert.equal(valueOf(m, 'http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }), 1);
    assert.ok(histogramOf(m, 'plant_store_commit_batch_size')!.sum! >= 1);
    assert.equal(valueOf(m, 'plant_store_webhook_backlog'), 0);
    assert.equal(valueOf(m, 'plant_store_webhook_deliveries_total', { outcome: 'delivered' }), 0);
    assert.ok(valueOf(m, 'process_resident_memory_bytes')! > 0);
    // prom-client's sum omits it: the supervisor's own start (the process started; a reload keeps it).
    const started = valueOf(m, 'process_start_time_seconds')!;
    assert.ok(started >= startedBefore - 1 && started <= Date.now() / 1000 + 1, `process_start_time_seconds ${started}`);

    assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null });
    await assert.rejects(fetch(url), 'the metrics port is closed');
  });

  it('refuses to start when the metrics port is taken, naming the setting', async () => {
    const first = await startServer(after, {
      env: { DATABASE_URL: `file:${join(tempDir(after), 'a.db')}`, PLANT_STORE_TOKENS: TOKEN, METRICS_PORT: '0' },
    });
    const taken = new URL(await metricsUrl(first)).port;
    const second = await startServer(after, {
      env: { DATABASE_URL: `file:${join(tempDir(after), 'b.db')}`, PLANT_STORE_TOKENS: TOKEN, METRICS_PORT: taken },
    }).catch((error: Error) => error);
    assert.ok(second instanceof Error);
    assert.match(second.message, /cannot start: METRICS_HOST\/METRICS_PORT: cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE\)/);
  });

  it('with WEB_CONCURRENCY=2, one scrape of the primary adds up both workers', async () => {
    const server = await startServer(after, {
      env: {
        DATABASE_URL: `file:${join(tempDir(after), 'c.db')}`,
        PLANT_STORE_TOKENS: TOKEN,
        WEB_CONCURRENCY: '2',
        METRICS_PORT: '0',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      },
    });
    await until(() => (server.stdout.match(/Server listening at/g) ?? []).length === 2, 'two workers to listen', { timeoutMs: 30_000 });
    const url = await metricsUrl(server);
    // A subscriber nobody answers for (port 9 refuses): every event's first attempt fails and waits 5 s to retry.
    const hook = await request(`${server.url}/webhooks`, { method: 'POST', token: TOKEN, body: '{"url":"http://127.0.0.1:9/hooks"}' });
    assert.equal(hook.status, 201);
    // 20 connections, handed to the workers in turn: about 10 each, and the scrape must show all 20.
    const statuses = [];
    for (let id = 0; id < 20; id++) statuses.push(await postAlone(server.url, `{"id":${id},"name":"p${id}"}`));
    assert.deepEqual([...new Set(statuses)], [200]);
    let m = (await scrape(url)).metrics;
    await until(
      async () => valueOf((m = (await scrape(url)).metrics), 'plant_store_webhook_deliveries_total', { outcome: 'retry' }) === 20,
      '20 failed first attempts',
      { timeoutMs: 10_000 },
    );
    assert.equal(valueOf(m, 'http_requests_total', { method: 'POST', route: '/plants', status: '200' }), 20);
    assert.equal(histogramOf(m, 'http_request_duration_seconds', { method: 'POST', route: '/plants' })!.count, 20);
    assert.ok(histogramOf(m, 'plant_store_commit_batch_size')!.sum! >= 21);
    assert.equal(valueOf(m, 'plant_store_webhook_backlog'), 20, 'the count in the database once, not once per worker');
    assert.equal(valueOf(m, 'plant_store_webhook_deliveries_total', { outcome: 'delivered' }), 0);
    assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null });
    await assert.rejects(fetch(url));
  });

  it("with WEB_CONCURRENCY=2, the sum's counters never go backwards: not in a reload, nor when a worker dies and is replaced", async () => {
    const server = await startServer(after, {
      // A second's keep-alive: an old worker hands over once the start's idle connection to it has closed.
      env: {
        DATABASE_URL: `file:${join(tempDir(after), 'r.db')}`,
        PLANT_STORE_TOKENS: TOKEN,
        WEB_CONCURRENCY: '2',
        METRICS_PORT: '0',
        KEEP_ALIVE_TIMEOUT_MS: '1000',
      },
    });
    const listening = () => [...server.stdout.matchAll(/"pid":(\d+)[^\n]*Server listening at/g)].map((match) => Number(match[1]));
    await until(() => listening().length === 2, 'two workers to listen', { timeoutMs: 30_000 });
    const url = await metricsUrl(server);
    const posts = async (from: number, count: number) => {
      for (let id = from; id < from + count; id++) assert.equal(await postAlone(server.url, `{"id":${id},"name":"p${id}"}`), 200);
    };
    // Summed over the workers serving now (and those that served before them): never less than was written.
    const written = async () => valueOf((await scrape(url)).metrics, 'http_requests_total', { method: 'POST', route: '/plants', status: '200' });
    await posts(0, 20);
    assert.equal(await written(), 20);

    // A reload: both workers replaced, each old one's counts with it. A rate() over this would have seen
    // 20 requests counted again (Prometheus takes any fall for a reset to 0), though none was made.
    server.signal('SIGHUP');
    await until(() => server.stderr.includes('plant-store: reloaded:'), 'the reload', { timeoutMs: 60_000 });
    await until(() => (server.stdout.match(/handed over and exited/g) ?? []).length === 2, 'the old workers to exit', { timeoutMs: 60_000 });
    assert.equal(await written(), 20, 'after the reload');
    await posts(20, 4);
    assert.equal(await written(), 24);

    // A worker killed: the supervisor starts another in its place.
    const killed = listening().at(-1)!;
    process.kill(killed, 'SIGKILL');
    await until(() => listening().length === 5, 'a worker in place of the one killed', { timeoutMs: 60_000 });
    // The last scrape had every count the killed worker made (one made after it would be missing).
    assert.equal(await written(), 24, 'after a worker was killed and replaced');
    await posts(24, 2);
    assert.equal(await written(), 26);
    assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null });
  });
});
