import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { startServer, type ServerProcess } from '../process.js';
import { killService } from '../process/supervised.js';
import { postgresUnavailableReason, TestPostgres } from '../store/postgres/pg-server.js';
import { TOKEN, verifyAfterCrash, writer, WRITERS, type Known } from './crash-workload.js';
import { needs, sleep, until } from '../toolkit.js';

/**
 * Crash durability on PostgreSQL: the service killed with SIGKILL while clients write at full speed
 * (several rounds), and the database server itself killed (immediate shutdown: no checkpoint, crash
 * recovery at the next start) while the service keeps running. Every acknowledged write survives
 * exactly. The test cluster runs with fsync off, which loses nothing unless the OS itself crashes;
 * synchronous_commit is turned back on here, since a commit acknowledged before its WAL is written
 * would be lost by the database crash this test makes.
 */
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 3);
const skip = needs('crash durability on PostgreSQL', postgresUnavailableReason());

async function cluster(): Promise<TestPostgres> {
  const server = await TestPostgres.start(after);
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

describe('crash durability on PostgreSQL', { skip }, () => {
  test(`the service SIGKILLed at a random moment, ${ROUNDS} rounds`, { timeout: 10 * 60_000 }, async (t) => {
    const db = await cluster();
    const env = { DATABASE_URL: await db.createDatabase(), PLANT_STORE_TOKENS: TOKEN, LOG_LEVEL: 'info' };
    const known = new Map<string, Known>();
    let service = await startServer(after, { env });
    for (let round = 1; round <= ROUNDS; round++) {
      const stop = { now: false };
      const writers = Array.from({ length: WRITERS }, (_, w) => writer(service, round, w, known, stop));
      const ackedThisRound = () => [...known.values()].filter((k) => k.acked?.name.startsWith(`r${round} `)).length;
      await until(() => ackedThisRound() >= 1000, 'writes to be acknowledged', { timeoutMs: 120_000 });
      await sleep(Math.floor(Math.random() * 1000));
      killService(service);
      assert.equal((await service.exited).signal, 'SIGKILL');
      stop.now = true;
      const acked = (await Promise.all(writers)).reduce((a, b) => a + b, 0);
      service = await startServer(after, { env });
      const count = await verifyAfterCrash(service, known);
      t.diagnostic(`round ${round}: ${acked} writes acknowledged, SIGKILL; ${count} plants after restart, none lost or changed`);
    }
    await service.stop('SIGTERM');
  });

  test(
    'the database server killed (immediate shutdown) under writes: 503 while down, no acknowledged write lost, the service recovers by itself',
    { timeout: 10 * 60_000 },
    async (t) => {
      const db = await cluster();
      const env = { DATABASE_URL: await db.createDatabase(), PLANT_STORE_TOKENS: TOKEN, LOG_LEVEL: 'info', DB_TIMEOUT_MS: '2000' };
      const known = new Map<string, Known>();
      const service: ServerProcess = await startServer(after, { env });
      const stop = { now: false };
      let unavailable = 0;
      const counted = (answer: { status: number }) => {
        if (answer.status === 503) unavailable++;
      };
      const writers = Array.from({ length: WRITERS }, (_, w) => writer(service, 1, w, known, stop, counted));
      const acked = () => [...known.values()].filter((k) => k.acked !== undefined).length;
      await until(() => acked() >= 1000, 'writes to be acknowledged', { timeoutMs: 120_000 });
      await sleep(Math.floor(Math.random() * 1000));
      await db.stop('immediate');
      const ackedBeforeCrash = acked();
      // Down until writes are refused (within DB_TIMEOUT_MS of being sent): a fixed pause could end before
      // any write had waited that long on a busy machine.
      await until(() => unavailable > 0, 'a write to be answered 503 while the database is down', { timeoutMs: 30_000 });
      assert.ok(service.running, 'the service survives its database going away');
      await db.startServer();
      await until(() => acked() >= ackedBeforeCrash + 500, 'writes to be acknowledged again after the database restart', { timeoutMs: 120_000 });
      stop.now = true;
      await Promise.all(writers);
      const count = await verifyAfterCrash(service, known);
      assert.match(service.stdout, /"msg":"store unavailable"/, 'the outage is logged');
      t.diagnostic(
        `${ackedBeforeCrash} writes acknowledged before the database crash, ${acked()} in all; ${count} plants after, none lost or changed`,
      );
      await service.stop('SIGTERM');
    },
  );
});
