import assert from 'node:assert/strict';
import { after, describe, it, test } from 'node:test';
import { cli, request, startServer, type ServerProcess } from '../../process.js';
import { postgresUnavailableReason, TestPostgres } from './pg-server.js';
import { needs, until } from '../../toolkit.js';
import { assertErrorShape } from '../../helpers.js';

/**
 * Scale-out: real service processes (dist/src/server.js) on one PostgreSQL database. Races between
 * instances are settled by the database; an outage of the database is answered 503 and healed
 * without a restart; stored tokens made by the CLI work across instances.
 */

const TOKEN = 'instances-test-token-0123456789abc';
/** Generous: a bound that proves "no hang", not a speed. */
const NO_HANG_MS = 30_000;

const skipReason = needs('the PostgreSQL scale-out tests', postgresUnavailableReason());

/** Two instances (one process each) on one fresh database. */
async function twoInstances(server: TestPostgres, env: Record<string, string> = {}): Promise<[ServerProcess, ServerProcess, string]> {
  const url = await server.createDatabase();
  const options = { env: { DATABASE_URL: url, PLANT_STORE_TOKENS: TOKEN, WEB_CONCURRENCY: '1', ...env } };
  // LOG_LEVEL stays info: startServer finds the port in the "Server listening at" line.
  // Started together: both migrate the empty database at once, under the advisory lock.
  const [a, b] = await Promise.all([startServer(after, options), startServer(after, options)]);
  return [a, b, url];
}

/** The answer, or a failure when there is none within NO_HANG_MS. */
async function bounded<T>(answer: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${NO_HANG_MS} ms`)), NO_HANG_MS);
  });
  try {
    return await Promise.race([answer, hang]);
  } finally {
    clearTimeout(timer);
  }
}

function post(instance: ServerProcess, body: string, headers: Record<string, string> = {}) {
  return bounded(request(`${instance.url}/plants`, { method: 'POST', token: TOKEN, body, headers }), `POST ${body}`);
}

function get(instance: ServerProcess, path: string, token = TOKEN) {
  return bounded(request(`${instance.url}${path}`, { token }), `GET ${path}`);
}

if (skipReason) {
  test('several instances on PostgreSQL', { skip: skipReason }, () => {});
} else {
  const server = await TestPostgres.start(after);

  describe('two instances on one PostgreSQL database', () => {
    it('reads through one what was written through the other, int64 ids exact', async () => {
      const [a, b] = await twoInstances(server);
      const id = '9223372036854775807';
      assert.equal((await post(a, `{"id":${id},"name":"Fern","tag":"green"}`)).status, 200);
      const read = await get(b, `/plants/${id}`);
      assert.equal(read.status, 200);
      assert.equal(read.text, `{"id":${id},"name":"Fern","tag":"green"}`);
      assert.equal((await request(`${b.url}/plants/${id}`, { method: 'DELETE', token: TOKEN })).status, 204);
      assert.equal((await get(a, `/plants/${id}`)).status, 404);
    });

    it('settles If-None-Match: * races between instances: exactly one 200 and one 412 per id', async () => {
      const [a, b] = await twoInstances(server);
      const pairs = await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const id = 2n ** 60n + BigInt(i);
          const [fromA, fromB] = await Promise.all([
            post(a, `{"id":${id},"name":"a${i}"}`, { 'if-none-match': '*' }),
            post(b, `{"id":${id},"name":"b${i}"}`, { 'if-none-match': '*' }),
          ]);
          return { id, i, statuses: [fromA.status, fromB.status] };
        }),
      );
      for (const { id, i, statuses } of pairs) {
        assert.deepEqual([...statuses].sort(), [200, 412], `id ${id}: ${statuses.join(', ')}`);
        // The stored plant is the winner's.
        const winner = statuses[0] === 200 ? 'a' : 'b';
        assert.equal((await get(a, `/plants/${id}`)).text, `{"id":${id},"name":"${winner}${i}"}`);
      }
    });

    it('leaves one whole plant when both instances replace one id at once', async () => {
      const [a, b] = await twoInstances(server);
      const writes = Array.from({ length: 40 }, (_, i) => post(i % 2 ? a : b, `{"id":77,"name":"n${i}","tag":"t${i}"}`));
      const answers = await Promise.all(writes);
      assert.deepEqual([...new Set(answers.map((r) => r.status))], [200]);
      const plant = JSON.parse((await get(b, '/plants/77')).text) as { name: string; tag: string };
      assert.equal(plant.name.slice(1), plant.tag.slice(1), `a mix of two requests: ${JSON.stringify(plant)}`);
    });

    it('accepts a token the CLI stored, on every instance, and refuses it once revoked', async () => {
      const [a, b, url] = await twoInstances(server);
      const created = await cli(url, 'token', 'create', '--name', 'reader', '--scope', 'plants:read');
      assert.equal(created.code, 0, created.stderr);
      const token = created.stdout.trim();
      assert.match(token, /^ps_/);
      assert.equal((await get(a, '/plants?limit=1', token)).status, 200);
      assert.equal((await get(b, '/plants?limit=1', token)).status, 200);
      const write = await request(`${b.url}/plants`, { method: 'POST', token, body: '{"id":1,"name":"x"}' });
      assert.equal(write.status, 403);
      const listed = await cli(url, 'token', 'list', '--json');
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(
        (JSON.parse(listed.stdout) as { name: string; scopes: string[]; revokedAt: unknown }[]).map((t) => [t.name, t.scopes, t.revokedAt]),
        [['reader', ['plants:read'], null]],
      );
      const revoked = await cli(url, 'token', 'revoke', 'reader');
      assert.equal(revoked.code, 0, revoked.stderr);
      for (const instance of [a, b]) {
        await until(async () => (await get(instance, '/plants?limit=1', token)).status === 401, 'the revoked token to be refused', {
          timeoutMs: NO_HANG_MS,
        });
      }
    });

    it('starts several instances at once on an empty database with one first token between them', async () => {
      const url = await server.createDatabase();
      const options = { env: { DATABASE_URL: url, WEB_CONCURRENCY: '1' } };
      const instances = await Promise.all([startServer(after, options), startServer(after, options), startServer(after, options)]);
      const printedBy = () => instances.flatMap((i) => i.stderr.match(/ps_[A-Za-z0-9_-]{20,}/g) ?? []);
      // Printed once the instance that made it listens: waited for, as firstToken does.
      await until(() => printedBy().length > 0, "the first token on one instance's stderr");
      const printed = printedBy();
      assert.equal(new Set(printed).size, 1, `one token printed in all: ${printed.join(', ')}`);
      for (const instance of instances) assert.equal((await get(instance, '/plants', printed[0])).status, 200);
    });

    it('runs `plant-store migrate` on its own', async () => {
      const url = await server.createDatabase();
      const first = await cli(url, 'migrate');
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stderr, /postgres/);
      assert.equal((await cli(url, 'migrate')).code, 0);
    });

    it('serves with several worker processes (WEB_CONCURRENCY=2) and stops them all on SIGTERM', async () => {
      const url = await server.createDatabase();
      const instance = await startServer(after, { env: { DATABASE_URL: url, PLANT_STORE_TOKENS: TOKEN, WEB_CONCURRENCY: '2', LOG_LEVEL: 'info' } });
      assert.match(instance.stderr, /starting 2 worker processes/);
      // Both workers come up (each logs that it listens) and share the port.
      await until(() => (instance.stdout.match(/Server listening at/g) ?? []).length === 2, 'two workers to listen', { timeoutMs: NO_HANG_MS });
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post(instance, `{"id":${i},"name":"p${i}"}`)));
      assert.deepEqual([...new Set(answers.map((r) => r.status))], [200]);
      assert.equal(JSON.parse((await get(instance, '/plants')).text).length, 20);
      assert.deepEqual(await instance.stop('SIGTERM'), { code: 0, signal: null });
    });

    it('answers 503 within a bound, not a hang, when PostgreSQL stops answering, and recovers', async () => {
      const [a] = await twoInstances(server, { DB_TIMEOUT_MS: '1000' });
      assert.equal((await post(a, '{"id":8,"name":"before"}')).status, 200);
      await server.freeze(true);
      try {
        // Served by a pooled connection that no longer answers, and by new connections that never finish starting.
        const answers = await Promise.all([get(a, '/plants/8'), post(a, '{"id":9,"name":"during"}'), get(a, '/plants'), get(a, '/readyz')]);
        for (const answer of answers) {
          assert.equal(answer.status, 503, answer.text);
          assert.equal(answer.headers.get('retry-after'), '1');
        }
      } finally {
        await server.freeze(false);
      }
      await until(async () => (await get(a, '/readyz')).status === 200, 'the instance to be ready again', { timeoutMs: NO_HANG_MS });
      assert.equal((await get(a, '/plants/8')).text, '{"id":8,"name":"before"}');
    });

    // Last: it stops the database server that the tests above share.
    it('answers 503 with Retry-After while PostgreSQL is down, and recovers without a restart', async () => {
      const [a, b] = await twoInstances(server, { DB_TIMEOUT_MS: '2000' });
      assert.equal((await post(a, '{"id":5,"name":"before"}')).status, 200);

      await server.stop('fast');
      for (const answer of [await get(a, '/plants/5'), await post(b, '{"id":6,"name":"during"}'), await get(b, '/plants')]) {
        assert.equal(answer.status, 503, answer.text);
        assert.equal(answer.headers.get('retry-after'), '1');
        const body = JSON.parse(answer.text) as { error: number; message: string };
        assertErrorShape(body, 503);
        assert.equal(body.error, 503);
        assert.doesNotMatch(body.message, /ECONN|at .*\.js/);
      }
      const ready = await get(a, '/readyz');
      assert.equal(ready.status, 503);
      assert.equal(JSON.parse(ready.text).error, 503);
      assert.equal((await get(b, '/healthz')).status, 200, 'the process itself is up');

      await server.startServer();
      for (const instance of [a, b]) {
        await until(async () => (await get(instance, '/readyz')).status === 200, 'the instance to be ready again', { timeoutMs: NO_HANG_MS });
      }
      assert.equal((await get(b, '/plants/5')).text, '{"id":5,"name":"before"}');
      assert.equal((await post(b, '{"id":6,"name":"after"}')).status, 200);
      assert.equal((await get(a, '/plants/6')).text, '{"id":6,"name":"after"}');
      assert.ok(a.running && b.running, 'no restart');
    });
  });
}
