import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { request, startServer, type ServerProcess } from '../process.js';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { StoreUnavailableError } from '../../src/store/store.js';
import { postgresUnavailableReason, TestPostgres } from '../store/postgres/pg-server.js';
import { Receiver, verify } from '../webhooks/receiver.js';
import { TOKEN, type Plant } from './crash-workload.js';
import { assertAllOn, assertRodeThrough, writeThroughFailover } from './failover-workload.js';
import { needs, sleep, until } from '../toolkit.js';

/**
 * PostgreSQL high availability, on a throwaway primary and standby on loopback: the primary's postmaster
 * SIGKILLed under writes and the standby promoted, with the service given both hosts and left alone; and
 * list reads served by a replica, within its lag, falling back to the primary when it lags or stops.
 *
 * The failover pair replicates synchronously: synchronous_commit = on (the default, which the other test
 * clusters turn off) and synchronous_standby_names naming the standby, so a commit is acknowledged only
 * once the standby has flushed it. fsync stays off, as in every test cluster: only processes are killed
 * here, never the machine, so whatever reached the OS is kept.
 */
const skip = needs('the PostgreSQL high-availability tests', postgresUnavailableReason());
const DB_TIMEOUT_MS = 1500;

/** A primary and a standby streaming from it as `name`; synchronous when asked. */
async function pair(name: string, synchronous: boolean, cleanup: typeof after = after): Promise<{ primary: TestPostgres; standby: TestPostgres }> {
  // pg_basebackup needs full_page_writes; a synchronous standby needs commits that wait for it.
  const primary = await TestPostgres.start(cleanup, { full_page_writes: 'on', synchronous_commit: synchronous ? 'on' : 'off' });
  const standby = await primary.startStandby(cleanup, name);
  if (synchronous) {
    // Set after the base backup, so that the standby does not inherit it: once promoted, it has no
    // standby of its own to wait for.
    await primary.sql(`ALTER SYSTEM SET synchronous_standby_names = '${name}'`);
    await primary.sql('SELECT pg_reload_conf()');
  }
  const state = synchronous ? 'sync' : 'async';
  await until(
    async () =>
      (await primary.sql<{ sync_state: string }>(`SELECT sync_state FROM pg_stat_replication WHERE application_name = '${name}'`))[0]?.sync_state ===
      state,
    `the standby to stream (${state})`,
    { timeoutMs: 30_000 },
  );
  return { primary, standby };
}

/** A new database on the primary, once the standby has it too; its name. */
async function database(primary: TestPostgres, standby: TestPostgres): Promise<string> {
  const name = new URL(await primary.createDatabase()).pathname.slice(1);
  await until(
    async () => (await standby.sql(`SELECT 1 FROM pg_database WHERE datname = '${name}'`)).length === 1,
    'the standby to have the database',
    { timeoutMs: 30_000 },
  );
  return name;
}

function url(database: string, ...servers: TestPostgres[]): string {
  return `postgres://postgres@${servers.map((s) => `127.0.0.1:${s.port}`).join(',')}/${database}`;
}

async function listedIds(service: ServerProcess, query = ''): Promise<string[]> {
  const res = await request(`${service.url}/plants?limit=1000${query}`, { token: TOKEN });
  assert.equal(res.status, 200, res.text);
  return (JSON.parse(res.text) as Array<{ id: number }>).map((p) => String(p.id));
}

async function exportedIds(service: ServerProcess): Promise<string[]> {
  const res = await request(`${service.url}/plants?format=ndjson`, { token: TOKEN });
  assert.equal(res.status, 200, res.text);
  return res.text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => String((JSON.parse(line) as { id: number }).id));
}

describe('PostgreSQL high availability', { skip }, () => {
  test(
    'the primary SIGKILLed under writes, the standby promoted: only 200 and 503, back within DB_TIMEOUT_MS plus seconds, every acknowledged plant on the promoted server, webhooks carry on',
    { timeout: 3 * 60_000 },
    async (t) => {
      const { primary, standby } = await pair('standby1', true);
      const db = await database(primary, standby);
      const receiver = await Receiver.start(after);
      const service = await startServer(after, {
        env: {
          DATABASE_URL: `${url(db, primary, standby)}?target_session_attrs=read-write`,
          PLANT_STORE_TOKENS: TOKEN,
          DB_TIMEOUT_MS: String(DB_TIMEOUT_MS),
          WEB_CONCURRENCY: '1',
          WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
          WEBHOOK_TIMEOUT_MS: '1000',
          WEBHOOK_RETRY_SCHEDULE: '0.2,0.5,1,1,1,1',
        },
      });
      const endpoint = await request(`${service.url}/webhooks`, { method: 'POST', token: TOKEN, body: JSON.stringify({ url: receiver.url }) });
      assert.equal(endpoint.status, 201, endpoint.text);
      const { secret } = JSON.parse(endpoint.text) as { secret: string };

      // A read before the kill: the reads' own connections (PG_READ_POOL_SIZE) go to the old primary too.
      assert.equal((await request(`${service.url}/plants/1`, { token: TOKEN })).status, 404);
      const run = await writeThroughFailover(service, async () => {
        primary.kill();
        // No primary for well longer than a request waits (assertRodeThrough's bound is DB_TIMEOUT_MS + 4 s):
        // requests in this gap must get 503, not wait for the promotion.
        await sleep(DB_TIMEOUT_MS + 6000);
        await standby.promote();
      });
      assert.ok(service.running, 'the service rode through without a restart');
      const figures = assertRodeThrough(run, DB_TIMEOUT_MS);
      const stored = await assertAllOn(standby.url(db), run.known);
      // Reads by id found the new primary as the writes did: an acknowledged plant is answered as written.
      const [readId, { acked }] = [...run.known].find(([, known]) => known.acked !== undefined && known.inFlight === undefined)!;
      const byId = await request(`${service.url}/plants/${readId}`, { token: TOKEN });
      assert.equal(byId.status, 200, byId.text);
      const { name, tag } = JSON.parse(byId.text) as Plant;
      assert.deepEqual(tag === undefined ? { name } : { name, tag }, acked);

      // Webhook deliveries carry on from the new primary: every acknowledged write is announced.
      const key = (id: string, plant: Plant) => `${id}|${plant.name}|${plant.tag ?? ''}`;
      const ackedWrites = run.answers.filter((a) => a.status !== 503).map((a) => key(a.id, a.plant));
      const announced = new Set<string>();
      let read = 0;
      await until(
        () => {
          for (; read < receiver.received.length; read++) {
            // verify() keeps ids as text; names and tags are strings as sent.
            const data = verify(secret, receiver.received[read]!).data as { id: string; name: string; tag?: string };
            announced.add(key(data.id, data.tag === undefined ? { name: data.name } : { name: data.name, tag: data.tag }));
          }
          return ackedWrites.every((w) => announced.has(w));
        },
        'every acknowledged write to be announced',
        { timeoutMs: 60_000, everyMs: 500 },
      );

      t.diagnostic(`${figures}; ${stored} plants on the promoted server, every acknowledged one; ${receiver.received.length} webhook deliveries`);
      await service.stop('SIGTERM');
    },
  );

  // One primary with an asynchronous standby for the next two tests (the second stops the standby), made
  // by the first that needs it and removed when the suite ends (an after() from inside a test would run
  // when that test ends).
  const removals: Array<() => unknown> = [];
  after(async () => {
    for (const remove of removals.reverse()) await remove();
  });
  const atSuiteEnd = ((remove: () => unknown) => void removals.push(remove)) as typeof after;
  let replicated: Promise<{ primary: TestPostgres; standby: TestPostgres; db: string }> | undefined;
  const replicatedPair = () =>
    (replicated ??= (async () => {
      const { primary, standby } = await pair('replica1', false, atSuiteEnd);
      return { primary, standby, db: await database(primary, standby) };
    })());

  test('a standby named first is passed over for the primary, and a standby alone is never taken for one', { timeout: 60_000 }, async () => {
    const { primary, standby, db } = await replicatedPair();
    const store = await PostgresStore.open(`${url(db, standby, primary)}?target_session_attrs=read-write`, { poolSize: 2, timeoutMs: 2000 });
    try {
      await store.plants.put({ id: 7, name: 'on the primary' });
      await store.ping();
    } finally {
      await store.close();
    }
    await assert.rejects(PostgresStore.open(url(db, standby), { poolSize: 1, timeoutMs: 5000 }), (error: Error) => {
      assert.ok(error instanceof StoreUnavailableError);
      assert.match(String((error.cause as Error).message), /is a standby \(in recovery\), not what target_session_attrs=primary asks for/);
      return true;
    });
  });

  test(
    'lists and exports read from a replica within READ_REPLICA_MAX_LAG_MS, from the primary while it lags more or is stopped, never an error',
    { timeout: 2 * 60_000 },
    async (t) => {
      const { primary, standby: replica, db } = await replicatedPair();
      await primary.sql('DELETE FROM plants', db);
      // The replica's lag is counted from its last replayed commit (replicas.ts): once replay is paused it
      // grows from the last write before the pause, however long the test then takes to list. The bound is
      // the point (lists from the replica within it, from the primary beyond), and generous for a loaded
      // machine, where seconds pass between the write, the pause and the list.
      const maxLagMs = 20_000;
      // The test's own after(): the global one, called past an await on the pair another test made, went
      // astray, and a failing run kept this server, and with it the file, alive for good.
      const service = await startServer(t.after.bind(t) as typeof after, {
        env: {
          DATABASE_URL: url(db, primary),
          DATABASE_READ_URL: url(db, replica),
          READ_REPLICA_MAX_LAG_MS: String(maxLagMs),
          PLANT_STORE_TOKENS: TOKEN,
          DB_TIMEOUT_MS: '2000',
          WEB_CONCURRENCY: '1',
        },
      });
      const put = async (id: number) => {
        const res = await request(`${service.url}/plants`, { method: 'POST', token: TOKEN, body: JSON.stringify({ id, name: `p${id}` }) });
        assert.equal(res.status, 200, res.text);
      };

      await put(1);
      const written = Date.now();
      await until(async () => (await listedIds(service)).includes('1'), 'a written plant to be listed', { timeoutMs: maxLagMs });
      const listedAfter = Date.now() - written;

      // Replay paused: the replica falls behind. Until it is READ_REPLICA_MAX_LAG_MS behind, lists and
      // exports come from it (without the new plant); single-plant reads come from the primary.
      await replica.sql('SELECT pg_wal_replay_pause()');
      await until(
        async () => (await replica.sql<{ state: string }>('SELECT pg_get_wal_replay_pause_state() AS state'))[0]?.state === 'paused',
        'replay to pause',
        { timeoutMs: 10_000 },
      );
      const paused = Date.now();
      await put(2);
      assert.equal((await request(`${service.url}/plants/2`, { token: TOKEN })).status, 200);
      assert.deepEqual(await listedIds(service), ['1'], 'the list comes from the replica');
      assert.deepEqual(await exportedIds(service), ['1'], 'the export comes from the replica');
      // Then the replica is too far behind: lists go to the primary.
      await until(async () => (await listedIds(service)).includes('2'), 'lists to leave the lagging replica', { timeoutMs: maxLagMs + 5000 });
      const leftAfter = Date.now() - paused;
      await replica.sql('SELECT pg_wal_replay_resume()');

      // The replica stopped: lists keep answering, from the primary, through several of the checks.
      await replica.stop('fast');
      const stoppedAt = Date.now();
      await put(3);
      let lists = 0;
      while (Date.now() - stoppedAt < 3000) {
        assert.deepEqual(await listedIds(service), ['1', '2', '3']);
        lists++;
        await sleep(100);
      }
      assert.deepEqual(await exportedIds(service), ['1', '2', '3']);
      t.diagnostic(
        `listed ${listedAfter} ms after the write; replay paused: lists left the replica after ${leftAfter} ms; ${lists} lists from the primary with the replica stopped`,
      );
      await service.stop('SIGTERM');
    },
  );
});
