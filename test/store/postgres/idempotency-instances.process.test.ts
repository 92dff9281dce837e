import assert from 'node:assert/strict';
import { after, describe, it, test } from 'node:test';
import { request, startServer, type ServerProcess } from '../../process.js';
import { postgresUnavailableReason, TestPostgres } from './pg-server.js';
import { needs } from '../../toolkit.js';

/**
 * Idempotency-Keys shared by every instance on one PostgreSQL database: a key used through one instance is
 * replayed (or refused, 422) by another, and two instances taking the same key at once make one write
 * between them, both answering with it.
 */

const TOKEN = 'idempotency-instances-token-0123456';
const skipReason = needs('Idempotency-Keys on several PostgreSQL instances', postgresUnavailableReason());

function post(instance: ServerProcess, path: string, body: string, key: string, headers: Record<string, string> = {}) {
  return request(`${instance.url}${path}`, { method: 'POST', token: TOKEN, body, headers: { 'idempotency-key': key, ...headers } });
}

if (skipReason) {
  test('Idempotency-Keys on several PostgreSQL instances', { skip: skipReason }, () => {});
} else {
  const server = await TestPostgres.start(after);
  const url = await server.createDatabase();
  const options = { env: { DATABASE_URL: url, PLANT_STORE_TOKENS: TOKEN } };
  const [a, b] = await Promise.all([startServer(after, options), startServer(after, options)]);

  describe('Idempotency-Keys on two instances of one PostgreSQL database', () => {
    it('replays on one instance the answer kept through the other, and refuses another request with the key (422)', async () => {
      const first = await post(a, '/plants', '{"id":1,"name":"Fern","tag":"green"}', 'shared-1');
      assert.equal(first.status, 200, first.text);
      const replay = await post(b, '/plants', '{"id":1,"name":"Fern","tag":"green"}', 'shared-1');
      assert.deepEqual(
        [replay.status, replay.text, replay.headers.get('etag'), replay.headers.get('idempotent-replayed')],
        [200, first.text, first.headers.get('etag'), 'true'],
      );
      assert.equal((await request(`${b.url}/plants/1`, { token: TOKEN })).headers.get('etag'), first.headers.get('etag'), 'not written again');
      const other = await post(b, '/plants', '{"id":1,"name":"Moss"}', 'shared-1');
      assert.equal(other.status, 422, other.text);
      assert.match((JSON.parse(other.text) as { message: string }).message, /^Idempotency-Key "shared-1" was used for another request/);
    });

    it('makes one write when both instances take the same key at once: both answer with it', async () => {
      const pairs = await Promise.all(
        Array.from({ length: 30 }, async (_, i) => {
          const body = JSON.stringify({ url: 'https://93.184.215.14/hook', description: `pair ${i}` });
          return Promise.all([post(a, '/webhooks', body, `pair-${i}`), post(b, '/webhooks', body, `pair-${i}`)]);
        }),
      );
      for (const [fromA, fromB] of pairs) {
        assert.deepEqual([fromA.status, fromB.status], [201, 201], `${fromA.text} ${fromB.text}`);
        assert.equal(fromA.text, fromB.text, 'the same endpoint and secret');
        const replayed = [fromA, fromB].filter((r) => r.headers.get('idempotent-replayed') === 'true').length;
        assert.equal(replayed, 1, 'one ran, the other replayed it');
      }
      const listed = JSON.parse((await request(`${a.url}/webhooks?limit=1000`, { token: TOKEN })).text) as unknown[];
      assert.equal(listed.length, pairs.length, 'one endpoint per key');
    });
  });
}
