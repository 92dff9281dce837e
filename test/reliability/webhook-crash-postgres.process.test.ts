import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { startServer } from '../process.js';
import { postgresUnavailableReason, TestPostgres } from '../store/postgres/pg-server.js';
import { Receiver } from '../webhooks/receiver.js';
import { announcements, assertAllAnnounced, registerEndpoint, TOKEN, webhookWriter, type Writes } from './webhook-workload.js';
import { needs, sleep, until } from '../toolkit.js';

/**
 * Webhooks on PostgreSQL: every acknowledged change announced after the service is SIGKILLed under
 * load; and with two instances on one database, every event delivered, none by both at once (a message
 * is claimed FOR UPDATE SKIP LOCKED with a lease), and the messages an instance had claimed when it died
 * delivered by the other once their lease passed.
 */
const skip = needs('webhooks across crashes on PostgreSQL', postgresUnavailableReason());
const WRITERS = 12;

async function cluster(): Promise<TestPostgres> {
  const server = await TestPostgres.start(after);
  // A commit acknowledged before its WAL is written would be lost by a crash: make commits durable.
  const admin = new pg.Client({ connectionString: server.url('postgres') });
  await admin.connect();
  try {
    await admin.query('ALTER SYSTEM SET synchronous_commit = on');
    await admin.query('SELECT pg_reload_conf()');
  } finally {
    await admin.end();
  }
  return server;
}

function hooksEnv(databaseUrl: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    PLANT_STORE_TOKENS: TOKEN,
    WEB_CONCURRENCY: '1',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    // An attempt's bound, and with it the lease (2 × it + 1 s): long enough that a loaded machine's stalls
    // never outlast a lease while its attempt is still in flight, which would send it twice at once.
    WEBHOOK_TIMEOUT_MS: '3000',
    WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2',
  };
}

describe('webhooks on PostgreSQL', { skip }, () => {
  test('SIGKILL under load: every acknowledged change is announced after the restart', { timeout: 5 * 60_000 }, async (t) => {
    const db = await cluster();
    const env = hooksEnv(await db.createDatabase());
    const receiver = await Receiver.start(after);
    let server = await startServer(after, { env });
    const secret = await registerEndpoint(server, receiver.url);
    const announced = announcements(receiver, secret);
    const writes: Writes = { acked: new Set(), maybe: new Set() };
    const stop = { now: false };
    const writers = Array.from({ length: WRITERS }, (_, w) => webhookWriter(() => server.url, `1${String(w).padStart(2, '0')}`, writes, stop));
    await until(() => writes.acked.size >= 500, 'writes to be acknowledged', { timeoutMs: 120_000 });
    await sleep(Math.floor(Math.random() * 500));
    server.signal('SIGKILL');
    await server.exited;
    stop.now = true;
    await Promise.all(writers);
    server = await startServer(after, { env });
    await until(() => [...writes.acked].every((w) => announced().has(w)), 'every acknowledged write to be announced', {
      timeoutMs: 60_000,
      everyMs: 200,
    });
    assertAllAnnounced(writes, announced());
    t.diagnostic(`${writes.acked.size} acknowledged writes, all announced; ${receiver.received.length} deliveries`);
    await server.stop('SIGTERM');
  });

  test(
    'two instances on one database: every event delivered, none by both at once; a dead instance’s claims are taken over after their lease',
    { timeout: 5 * 60_000 },
    async (t) => {
      const db = await cluster();
      const env = hooksEnv(await db.createDatabase());
      const receiver = await Receiver.start(after);
      // Each answer takes a while, so that two deliveries of one message at once would overlap here.
      receiver.answer = () => ({ status: 204, delayMs: 100 });
      const [a, b] = await Promise.all([startServer(after, { env }), startServer(after, { env })]);
      const secret = await registerEndpoint(a, receiver.url);
      const announced = announcements(receiver, secret);
      const writes: Writes = { acked: new Set(), maybe: new Set() };
      const stop = { now: false };
      let aAlive = true;
      const writers = Array.from({ length: WRITERS }, (_, w) =>
        webhookWriter(() => (w % 2 === 0 && aAlive ? a : b).url, `2${String(w).padStart(2, '0')}`, writes, stop),
      );
      await until(() => writes.acked.size >= 400, 'writes through both instances', { timeoutMs: 120_000 });
      // Kill one instance while it has deliveries in flight; the other goes on, and takes its claims over.
      a.signal('SIGKILL');
      aAlive = false;
      await a.exited;
      const atKill = writes.acked.size;
      await until(() => writes.acked.size >= atKill + 200, 'writes through the surviving instance', { timeoutMs: 120_000 });
      stop.now = true;
      await Promise.all(writers);
      await until(() => [...writes.acked].every((w) => announced().has(w)), 'every acknowledged write to be announced', {
        timeoutMs: 60_000,
        everyMs: 200,
      });
      assertAllAnnounced(writes, announced());
      assert.deepEqual(receiver.concurrent, [], 'no message was sent by both instances at once');
      t.diagnostic(`${writes.acked.size} acknowledged writes through two instances, all announced; ${receiver.received.length} deliveries`);
      await b.stop('SIGTERM');
    },
  );
});
