import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { firstToken } from '../process.js';
import { needs, until } from '../toolkit.js';
import { postgresUnavailableReason, TestPostgres } from '../store/postgres/pg-server.js';
import { holdConnection } from './held-connection.js';
import { client, connectProbe, consumer, feedIds, missing, scrapeProbe, startLoad } from './load.js';
import { alive, install, listeningSocket, serve, servingChunk, setVersion, type Supervised } from './supervised.js';

/**
 * SIGHUP on one host: the process `plant-store serve` runs as (systemd's MAINPID) stays, and its workers
 * are replaced by workers running the code installed now (here: the install's package.json says another
 * version, as a new tarball installed in place would), with no failed request, nothing acknowledged lost,
 * every event delivered once to a consumer that resumes, and the listening socket never closed. A new
 * release that cannot start, or is not ready in time, leaves the old one serving, and the log says why.
 */

const TOKEN = 'reload-test-token-0123456789abcdefgh';
const OLD = '1.0.0-before';
const NEW = '1.0.0-after';

/**
 * Load through a reload of `server` (its install in `dir`, the API called with `token`): what the load, the
 * consumer, the connection prober and (with METRICS_PORT) the scraper saw.
 */
async function reloadUnderLoad(server: Supervised, dir: string, token: string): Promise<void> {
  const pid = server.pid;
  const socket = listeningSocket(server.port);
  assert.ok(socket, 'the listening socket is found');
  const before = server.workers();
  const http = client();
  const feed = await consumer(after, server.url, token, http);
  const load = startLoad(server.url, token, http);
  const probe = connectProbe(server.port);
  const metricsUrl = /"msg":"metrics listening at (http:\/\/[^"]+)"/.exec(server.stdout())?.[1];
  const scrapes = metricsUrl === undefined ? undefined : scrapeProbe(metricsUrl);
  // Should an assertion below fail, the loops must still stop (each stop is idempotent): left running, they
  // kept the test's process alive for ever after its server was gone, and CI waited on it.
  after(async () => {
    await Promise.allSettled([load.stop(), probe.stop(), scrapes?.stop()]);
    await http.close().catch(() => undefined);
  });
  await until(() => load.requests() >= 200, 'the load to be under way', { timeoutMs: 60_000 });

  setVersion(dir, NEW);
  server.signal('SIGHUP');
  await until(() => server.stderr().includes('plant-store: reloaded:'), 'the reload to end', { timeoutMs: 120_000 }).catch((error: unknown) => {
    const notLoad = server
      .stdout()
      .split('\n')
      .filter((line) => !line.includes('"msg":"request"'));
    throw new Error(`${(error as Error).message}\nstderr: ${server.stderr()}\nlog: ${notLoad.slice(-30).join('\n')}`);
  });
  const reloaded = load.requests();
  await until(() => load.requests() >= reloaded + 200, 'the load to go on after the reload', { timeoutMs: 60_000 });
  const summary = await load.stop();
  const probed = await probe.stop();
  const scraped = (await scrapes?.stop()) ?? { scrapes: 0, failed: [] };

  assert.deepEqual(summary.failures, [], `${summary.failures.length} of ${summary.requests} requests failed`);
  assert.deepEqual(probed.refused, [], `new connections refused during the reload (${probed.opened} opened)`);
  assert.deepEqual(scraped.failed, [], `metrics scrapes that failed during the reload (of ${scraped.scrapes})`);
  assert.equal(server.running(), true);
  assert.equal(server.pid, pid, 'the same supervisor');
  assert.equal(listeningSocket(server.port), socket, 'the same listening socket: never closed');
  assert.deepEqual(await missing(server.url, token, summary.acknowledged), [], 'every acknowledged plant reads back');

  // Every event the feed holds since the consumer started, once each, in order.
  const expected = await feedIds(server.url, token, feed.startedAfter);
  await until(() => feed.received.length >= expected.length, 'the consumer to catch up', { timeoutMs: 60_000 });
  assert.deepEqual(feed.received, expected);
  assert.ok(expected.length >= summary.acknowledged.size, 'an event for each plant made');

  // The new version serves; the old workers are gone; the log and stderr say from which version to which.
  const health = (await (await fetch(`${server.url}/healthz`)).json()) as { version: string };
  assert.deepEqual(health, { status: 'ok', version: NEW });
  // The old workers wait for their clients to drop their keep-alive connections: these clients now do.
  feed.close();
  await http.close();
  for (const worker of before) await until(() => !alive(worker.pid), `old worker ${worker.pid} to exit`, { timeoutMs: 30_000 });
  assert.deepEqual(
    [
      ...new Set(
        server
          .workers()
          .slice(before.length)
          .map((worker) => worker.version),
      ),
    ],
    [NEW],
  );
  assert.match(server.stderr(), new RegExp(`plant-store: reloaded: version ${OLD} → ${NEW}\\n`));
  assert.match(server.stdout(), new RegExp(`"from":"${OLD}","to":"${NEW}","msg":"reloaded: version ${OLD} → ${NEW}"`));
}

describe('SIGHUP on SQLite, at the default settings', () => {
  test('the workers are replaced by the code installed now, with no failed request, nothing lost, the socket never closed', async () => {
    const dir = install(join(tempDir(after), 'install'));
    setVersion(dir, OLD);
    // Every setting at its default (the store in ./data, the first token printed), but the port: a free one.
    const server = await serve(after, { SHUTDOWN_DRAIN_MS: undefined }, { dir });
    // Written before the worker's ready line, but on the other pipe: waited for.
    const token = await firstToken(() => server.stderr());
    await reloadUnderLoad(server, dir, token);
    server.signal('SIGTERM');
    assert.deepEqual(await server.exited, { code: 0, signal: null });
  });

  test("the rate limits' counts are handed to the new worker: a reload gives no client a new budget", async () => {
    const dir = install(join(tempDir(after), 'install'));
    const server = await serve(
      after,
      { DATABASE_URL: `file:${join(dir, 'plants.db')}`, PLANT_STORE_TOKENS: TOKEN, RATE_LIMIT_PER_MINUTE: '1000' },
      { dir },
    );
    const remaining = async () => {
      const response = await fetch(`${server.url}/plants?limit=1`, { headers: { authorization: `Bearer ${TOKEN}` } });
      await response.text();
      return { left: Number(response.headers.get('ratelimit-remaining')), reset: Number(response.headers.get('ratelimit-reset')) };
    };
    // The counts live in one-minute windows: begin early enough in one for the reload to end within it.
    const first = await remaining();
    if (first.reset < 40) await new Promise((resolve) => setTimeout(resolve, (first.reset + 1) * 1000));
    for (let i = 0; i < 20; i++) await remaining();
    const before = await remaining();
    server.signal('SIGHUP');
    await until(() => server.stderr().includes('plant-store: reloaded:'), `the reload; stderr: ${server.stderr()}`, { timeoutMs: 120_000 });
    const after_ = await remaining();
    assert.ok(after_.reset <= before.reset, 'still the same window');
    assert.equal(after_.left, before.left - 1, 'counted on from where the old worker was');
  });

  test("the old worker waits for its clients' idle connections, closing none; a stop meanwhile cuts that wait short: exit 0", async () => {
    const dir = install(join(tempDir(after), 'install'));
    const server = await serve(after, { DATABASE_URL: `file:${join(dir, 'plants.db')}`, PLANT_STORE_TOKENS: TOKEN }, { dir });
    const [old] = server.workers();
    // A client that keeps an idle connection to the old worker, and then leaves it be.
    const idle = await holdConnection(after, server.port);
    server.signal('SIGHUP');
    await until(() => server.stderr().includes('plant-store: reloaded:'), `the reload; stderr: ${server.stderr()}`, { timeoutMs: 120_000 });
    // Serving nothing new, the old worker waits for that client (up to KEEP_ALIVE_TIMEOUT_MS, 72 s).
    await until(() => new RegExp(`"pid":${old!.pid},[^\n]*"reason":"reload"`).test(server.stdout()), 'the handover', { timeoutMs: 30_000 });
    assert.equal(alive(old!.pid), true, 'the old worker waits');
    assert.equal(idle.closed(), false, 'its idle connection is not closed under its client');
    server.signal('SIGTERM');
    assert.deepEqual(await server.exited, { code: 0, signal: null });
    assert.equal(alive(old!.pid), false);
    await until(() => idle.closed(), 'the idle connection closed by the stop', { timeoutMs: 30_000 });
    assert.match(server.stdout(), new RegExp(`"pid":${old!.pid},.*"msg":"asked to stop sooner: the drain ends now"`));
  });

  test('a new release that cannot start: the old workers keep serving, and the log and stderr say why', async () => {
    const dir = install(join(tempDir(after), 'install'));
    setVersion(dir, OLD);
    const server = await serve(after, { DATABASE_URL: `file:${join(dir, 'plants.db')}`, PLANT_STORE_TOKENS: TOKEN }, { dir });
    const [old] = server.workers();
    // The release installed now refuses to start (a module that throws as it loads).
    setVersion(dir, NEW);
    appendFileSync(servingChunk(dir), "\nthrow new Error('this release is broken');\n");
    server.signal('SIGHUP');
    await until(() => server.stderr().includes('plant-store: reload failed'), `the reload to fail; stderr: ${server.stderr()}`, {
      timeoutMs: 120_000,
    });
    assert.match(
      server.stderr(),
      /plant-store: reload failed: the new worker \d+ exited before it was ready \(exit code 1\): this release is broken; the workers of version 1\.0\.0-before keep serving\n/,
    );
    assert.match(
      server.stdout(),
      /"level":50,.*"msg":"reload failed: the new worker \d+ exited before it was ready \(exit code 1\): this release is broken/,
    );
    assert.equal(alive(old!.pid), true);
    assert.deepEqual(await (await fetch(`${server.url}/healthz`)).json(), { status: 'ok', version: OLD });
    const created = await fetch(`${server.url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{"id":1,"name":"after"}',
    });
    assert.equal(created.status, 200);
    server.signal('SIGTERM');
    assert.deepEqual(await server.exited, { code: 0, signal: null });
  });

  test('a new release not ready within RELOAD_TIMEOUT_MS: it is killed, the old workers keep serving, and the log and stderr say why', async () => {
    const dir = install(join(tempDir(after), 'install'));
    setVersion(dir, OLD);
    const server = await serve(
      after,
      { DATABASE_URL: `file:${join(dir, 'plants.db')}`, PLANT_STORE_TOKENS: TOKEN, RELOAD_TIMEOUT_MS: '3000' },
      { dir },
    );
    const [old] = server.workers();
    // The release installed now hangs as it starts.
    writeFileSync(join(dir, 'hang.js'), 'setInterval(() => undefined, 1000); await new Promise(() => undefined);\n');
    appendFileSync(servingChunk(dir), "\nawait import('../../hang.js');\n");
    server.signal('SIGHUP');
    await until(() => server.stderr().includes('plant-store: reload failed'), `the reload to fail; stderr: ${server.stderr()}`, {
      timeoutMs: 120_000,
    });
    assert.match(
      server.stderr(),
      /plant-store: reload failed: the new worker (\d+) was not ready within RELOAD_TIMEOUT_MS \(3 s\); the workers of version 1\.0\.0-before keep serving\n/,
    );
    const hung = Number(/the new worker (\d+) was not ready/.exec(server.stderr())![1]);
    await until(() => !alive(hung), 'the hung worker to be gone', { timeoutMs: 30_000 });
    assert.equal(alive(old!.pid), true);
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    server.signal('SIGTERM');
    assert.deepEqual(await server.exited, { code: 0, signal: null });
  });
});

const skipReason = needs('the reload on PostgreSQL', postgresUnavailableReason());
if (skipReason) {
  test('SIGHUP on PostgreSQL', { skip: skipReason }, () => {});
} else {
  describe('SIGHUP on PostgreSQL', () => {
    test('the workers (one per CPU) are replaced one at a time, with no failed request, nothing lost, the socket never closed', async () => {
      const postgres = await TestPostgres.start(after);
      const dir = install(join(tempDir(after), 'install'));
      setVersion(dir, OLD);
      const env = {
        DATABASE_URL: await postgres.createDatabase(),
        PLANT_STORE_TOKENS: TOKEN,
        EVENTS_RETRY_MS: '100',
        WEB_CONCURRENCY: '2',
        METRICS_PORT: '0',
      };
      const server = await serve(after, env, { dir, count: 2 });
      await reloadUnderLoad(server, dir, TOKEN);
      server.signal('SIGTERM');
      assert.deepEqual(await server.exited, { code: 0, signal: null });
    });
  });
}
