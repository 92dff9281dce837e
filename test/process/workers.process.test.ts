import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from '../helpers.js';
import { request, startServer } from '../process.js';
import { until } from '../toolkit.js';

/** WEB_CONCURRENCY: how many processes serve (src/process/workers.ts; the setting read: test/config/config.test.ts). */
describe('WEB_CONCURRENCY', () => {
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
