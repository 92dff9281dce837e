import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from '../helpers.js';
import { request, startServer, type ServerProcess } from '../process.js';
import { postgresUnavailableReason, TestPostgres } from '../store/postgres/pg-server.js';
import { request as rawRequest } from './raw-http.js';
import { needs, sleep, until } from '../toolkit.js';

/**
 * Idempotency-Keys across a crash of the real server (SIGKILL), on SQLite and on PostgreSQL: a key whose
 * write committed replays it after the restart, one whose write did not runs once. POST /webhooks is the
 * request: the service makes each endpoint's id, so a write made twice would show as two endpoints.
 */

const TOKEN = 'idempotency-crash-token-0123456789ab';
const URL = 'https://93.184.215.14/hook';
const CLIENTS = 8;
const skipPostgres = needs('Idempotency-Keys across SIGKILL on PostgreSQL', postgresUnavailableReason());

interface Stores {
  name: string;
  /** A fresh store's DATABASE_URL. */
  fresh(): Promise<string>;
}

/** POST /webhooks with the key (kept in the description too, to find its endpoint). */
function register(server: ServerProcess, key: string) {
  return request(`${server.url}/webhooks`, {
    method: 'POST',
    token: TOKEN,
    body: JSON.stringify({ url: URL, description: key }),
    headers: { 'idempotency-key': key },
  });
}

/** Every endpoint, as key (its description) → ids. */
async function endpointsByKey(server: ServerProcess): Promise<Map<string, string[]>> {
  const listed = await request(`${server.url}/webhooks?limit=1000`, { token: TOKEN });
  assert.equal(listed.status, 200, listed.text);
  const byKey = new Map<string, string[]>();
  for (const { id, description } of JSON.parse(listed.text) as Array<{ id: string; description: string }>) {
    byKey.set(description, [...(byKey.get(description) ?? []), id]);
  }
  return byKey;
}

/** Sends the request on a socket and never reads the answer; resolves once the socket is connected and written. */
function sendUnread(server: ServerProcess, key: string): Promise<void> {
  const bytes = rawRequest(
    'POST',
    '/webhooks',
    { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'idempotency-key': key },
    JSON.stringify({ url: URL, description: key }),
  );
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1', () => socket.write(bytes, () => resolve()));
    socket.on('error', reject);
    after(() => socket.destroy());
  });
}

function crashSuite(stores: Stores): void {
  describe(`Idempotency-Keys across SIGKILL on ${stores.name}`, () => {
    it('replays after the restart a write that committed before the kill, its answer never read', { timeout: 120_000 }, async () => {
      const env = { DATABASE_URL: await stores.fresh(), PLANT_STORE_TOKENS: TOKEN };
      let server = await startServer(after, { env });
      await sendUnread(server, 'committed');
      await until(async () => (await endpointsByKey(server)).has('committed'), 'the endpoint to be committed', { timeoutMs: 30_000 });
      server.signal('SIGKILL');
      await server.exited;
      server = await startServer(after, { env });
      const retry = await register(server, 'committed');
      assert.equal(retry.status, 201, retry.text);
      assert.equal(retry.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual((await endpointsByKey(server)).get('committed'), [JSON.parse(retry.text).id], 'one endpoint, the one the answer names');
      await server.stop();
    });

    it('runs once after the restart a keyed import killed before its commit', { timeout: 120_000 }, async () => {
      const env = { DATABASE_URL: await stores.fresh(), PLANT_STORE_TOKENS: TOKEN };
      let server = await startServer(after, { env });
      const rows = Array.from({ length: 200 }, (_, i) => `{"id":${i + 1},"name":"p${i + 1}"}\n`).join('');
      const head = {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/x-ndjson',
        'idempotency-key': 'half',
        'transfer-encoding': 'chunked',
      };
      // Half the body, then the kill: the import cannot have committed.
      const half = rows.slice(0, rows.length / 2);
      const socket = connect(server.port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(rawRequest('POST', '/plants/import', head));
      socket.write(`${Buffer.byteLength(half).toString(16)}\r\n${half}\r\n`);
      await sleep(200);
      server.signal('SIGKILL');
      await server.exited;
      socket.destroy();
      server = await startServer(after, { env });
      const options = { method: 'POST', token: TOKEN, body: rows, headers: { 'content-type': 'application/x-ndjson', 'idempotency-key': 'half' } };
      const ran = await request(`${server.url}/plants/import`, options);
      assert.deepEqual([ran.status, ran.text, ran.headers.get('idempotent-replayed')], [200, '{"created":200,"replaced":0}', null]);
      const again = await request(`${server.url}/plants/import`, options);
      assert.deepEqual([again.status, again.text, again.headers.get('idempotent-replayed')], [200, ran.text, 'true']);
      await server.stop();
    });

    it(`writes each key once under ${CLIENTS} clients retrying through a SIGKILL at a random moment`, { timeout: 300_000 }, async (t) => {
      const env = { DATABASE_URL: await stores.fresh(), PLANT_STORE_TOKENS: TOKEN };
      let server = await startServer(after, { env });
      /** The server started after the kill, once it is being started: clients cut off wait for it. */
      const restart: { next?: Promise<ServerProcess> } = {};
      const answered = new Map<string, { id: string; replayed: boolean }>();
      let stop = false;
      let retried = 0;
      const client = async (c: number) => {
        for (let n = 0; !stop; n++) {
          const key = `c${c}-${n}`;
          // Until answered: a request the kill cut off is sent again, with its key, to whichever server runs.
          for (let attempt = 0; ; attempt++) {
            const answer = await register(server, key).catch(() => undefined);
            if (answer?.status === 201) {
              answered.set(key, { id: JSON.parse(answer.text).id as string, replayed: answer.headers.get('idempotent-replayed') === 'true' });
              if (attempt > 0) retried++;
              break;
            }
            if (answer !== undefined && answer.status !== 503) assert.fail(`${key}: ${answer.status} ${answer.text}`);
            server = await (restart.next ?? sleep(50).then(() => server));
          }
        }
      };
      const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
      await until(() => answered.size >= 200, 'keyed writes to be answered', { timeoutMs: 120_000 });
      await sleep(Math.floor(Math.random() * 300));
      server.signal('SIGKILL');
      await server.exited;
      restart.next = startServer(after, { env });
      server = await restart.next;
      const atRestart = answered.size;
      await until(() => answered.size >= atRestart + 100, 'keyed writes after the restart', { timeoutMs: 120_000 });
      stop = true;
      await Promise.all(clients);
      const stored = await endpointsByKey(server);
      for (const [key, { id }] of answered) assert.deepEqual(stored.get(key), [id], `${key}: one endpoint, the one its answer names`);
      assert.equal(stored.size, answered.size, 'no endpoint without an answered key');
      const replayed = [...answered.values()].filter((a) => a.replayed).length;
      t.diagnostic(`${answered.size} keys, each written once; ${retried} sent again after the kill, ${replayed} of them answered as replays`);
      await server.stop();
    });
  });
}

crashSuite({ name: 'SQLite', fresh: async () => `file:${join(tempDir(after), `crash-${Math.random().toString(36).slice(2)}.db`)}` });
if (skipPostgres) {
  describe('Idempotency-Keys across SIGKILL on PostgreSQL', { skip: skipPostgres }, () => {});
} else {
  const db = await TestPostgres.start(after);
  crashSuite({ name: 'PostgreSQL', fresh: () => db.createDatabase() });
}
