import assert from 'node:assert/strict';
import { get } from 'node:http';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { startServer } from '../process.js';
import { sleep, until } from '../toolkit.js';

const TOKEN = 'rate-workers-token-0123456789abcdef';

/** One request on a connection of its own (the supervisor hands each connection to the next worker in turn). */
function fresh(url: string): Promise<{ status: number; remaining: string | undefined; budget: string | undefined }> {
  return new Promise((resolve, reject) => {
    get(`${url}/plants?limit=1`, { agent: false, headers: { authorization: `Bearer ${TOKEN}` } }, (response) => {
      response.resume();
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          remaining: response.headers['ratelimit-remaining'] as string | undefined,
          budget: (response.headers.ratelimit as string | undefined)?.replace(/;t=\d+$/, ''),
        }),
      );
    }).on('error', reject);
  });
}

/**
 * RATE_LIMIT_PER_MINUTE with two workers on SQLite: the supervisor counts for both (process/rate-counts.ts),
 * so a token's budget is the limit, whichever worker serves each request, and RateLimit counts down across
 * them (each worker counted its own: twice the limit, each remaining value said twice).
 */
test('on SQLite with two workers, a token gets the limit a minute, not the limit per worker', async () => {
  const server = await startServer(after, {
    env: {
      DATABASE_URL: `file:${join(tempDir(after), 'p.db')}`,
      PLANT_STORE_TOKENS: TOKEN,
      WEB_CONCURRENCY: '2',
      RATE_LIMIT_PER_MINUTE: '5',
    },
  });
  await until(() => (server.stdout.match(/Server listening at/g) ?? []).length === 2, 'two workers to listen', { timeoutMs: 30_000 });
  // Windows are whole minutes: begin well inside one, so the counts cannot start again mid-test.
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await sleep(60_500 - intoMinute);
  const answers = [];
  for (let i = 0; i < 10; i++) answers.push(await fresh(server.url));
  assert.deepEqual(
    answers.map((answer) => answer.status),
    [200, 200, 200, 200, 200, 429, 429, 429, 429, 429],
  );
  assert.deepEqual(
    answers.slice(0, 5).map((answer) => answer.remaining),
    ['4', '3', '2', '1', '0'],
  );
  assert.deepEqual(
    answers.slice(0, 5).map((answer) => answer.budget),
    ['"default";r=4', '"default";r=3', '"default";r=2', '"default";r=1', '"default";r=0'],
  );
  assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null });
});
