import assert from 'node:assert/strict';
import { after, describe, it, test } from 'node:test';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { postgresUnavailableReason, TestPostgres } from '../store/postgres/pg-server.js';
import { assertError, testApp } from '../helpers.js';
import { needs, sleep } from '../toolkit.js';

/** On PostgreSQL every instance counts against one limit: the counts live in the database. */
const skipReason = needs('shared rate-limit tests', postgresUnavailableReason());

if (skipReason) {
  test('shared rate limits', { skip: skipReason }, () => {});
} else {
  const server = await TestPostgres.start(after);
  // Windows are whole minutes: start a test well inside one, so the counts cannot reset mid-test.
  const clearOfWindowEdge = async () => {
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await sleep(60_500 - intoMinute);
  };

  describe('rate limits shared between instances on PostgreSQL', () => {
    it('counts a token across two instances and answers 429 past the limit on either', async () => {
      await clearOfWindowEdge();
      const url = await server.createDatabase();
      const open = () => PostgresStore.open(url, { poolSize: 2, timeoutMs: 5000 });
      const one = await testApp(after, { store: await open(), config: { rateLimitPerMinute: 4 } });
      const two = await testApp(after, { store: await open(), config: { rateLimitPerMinute: 4 } });
      const statuses: number[] = [];
      const remaining: string[] = [];
      const budgets: string[] = [];
      for (const instance of [one, two, one, two]) {
        const res = await instance.call('GET', '/plants');
        statuses.push(res.statusCode);
        remaining.push(String(res.headers['ratelimit-remaining']));
        budgets.push(String(res.headers.ratelimit).replace(/;t=\d+$/, ''));
        assert.equal(res.headers['ratelimit-policy'], '"default";q=4;w=60');
      }
      assert.deepEqual(statuses, [200, 200, 200, 200]);
      assert.deepEqual(remaining, ['3', '2', '1', '0']);
      assert.deepEqual(budgets, ['"default";r=3', '"default";r=2', '"default";r=1', '"default";r=0']);
      for (const instance of [one, two]) {
        const res = await instance.call('GET', '/plants');
        assertError(res, 429, 'per minute');
        assert.ok(Number(res.headers['retry-after']) >= 1);
        assert.equal(res.headers['ratelimit-limit'], '4');
        assert.match(String(res.headers.ratelimit), new RegExp(`^"default";r=0;t=${res.headers['retry-after']}$`));
      }
    });

    it('counts concurrent requests exactly once each', async () => {
      const url = await server.createDatabase();
      const store = await PostgresStore.open(url, { poolSize: 4, timeoutMs: 5000 });
      const app = await testApp(after, { store, config: { rateLimitPerMinute: 10 } });
      await clearOfWindowEdge();
      const answers = await Promise.all(Array.from({ length: 16 }, () => app.call('GET', '/plants')));
      const counts = answers.map((r) => r.statusCode).sort();
      assert.deepEqual(counts, [...Array(10).fill(200), ...Array(6).fill(429)]);
    });
  });
}
