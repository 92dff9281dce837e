import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config/config.js';
import { tempDir } from './helpers.js';
import { request, startServer } from './process.js';
import { until } from './toolkit.js';

/** WEB_CONCURRENCY: how many processes serve (src/cluster.ts). */
describe('WEB_CONCURRENCY', () => {
  it('defaults to one process on SQLite and one per CPU on PostgreSQL', () => {
    assert.equal(loadConfig({}).webConcurrency, 1);
    assert.equal(loadConfig({ DATABASE_URL: 'file:/tmp/x.db' }).webConcurrency, 1);
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).webConcurrency, Math.min(availableParallelism(), 256));
    assert.equal(loadConfig({ DATABASE_URL: 'postgresql://u@h/db', WEB_CONCURRENCY: '3' }).webConcurrency, 3);
    assert.equal(loadConfig({ WEB_CONCURRENCY: '2' }).webConcurrency, 2);
  });

  it('refuses a bad value, naming the setting', () => {
    for (const bad of ['0', 'two', '-1', '257']) {
      assert.throws(
        () => loadConfig({ WEB_CONCURRENCY: bad }),
        (error: unknown) => error instanceof ConfigError && error.setting === 'WEB_CONCURRENCY',
      );
    }
  });

  it('on SQLite when asked: two workers share the port and the file, and stop together on SIGTERM', async () => {
    const databaseUrl = `file:${join(tempDir(after), 'p.db')}`;
    const token = 'cluster-test-token-0123456789abcdef';
    const server = await startServer(after, { env: { DATABASE_URL: databaseUrl, PLANT_STORE_TOKENS: token, WEB_CONCURRENCY: '2' } });
    assert.match(server.stderr, /starting 2 worker processes/);
    await until(() => (server.stdout.match(/Server listening at/g) ?? []).length === 2, 'two workers to listen', { timeoutMs: 30_000 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => request(`${server.url}/plants`, { method: 'POST', token, body: `{"id":${i},"name":"p${i}"}` })),
    );
    assert.deepEqual([...new Set(answers.map((a) => a.status))], [200]);
    const listed = await request(`${server.url}/plants`, { token });
    assert.equal((JSON.parse(listed.text) as unknown[]).length, 20);
    assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null });
  });
});
