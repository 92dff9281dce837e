import assert from 'node:assert/strict';
import { after, describe, it, test } from 'node:test';
import pg from 'pg';
import { hashToken } from '../../../src/auth/tokens.js';
import { PostgresStore } from '../../../src/store/postgres/store.js';
import { postgresUnavailableReason, TestPostgres } from './pg-server.js';
import { needs, until } from '../../toolkit.js';

/**
 * Reads have connections of their own to the primary (readPoolSize): a GET by id, a page, a count and a
 * token look-up are answered while every connection of the main pool is held by writes waiting on a lock,
 * and they still see every write acknowledged before them.
 */

const skipReason = needs('PostgreSQL read connections', postgresUnavailableReason());

/**
 * Sessions of the service on this database waiting for a lock (the writes held up by the test's lock), seen
 * from a session outside any transaction (within one, pg_stat_activity is a snapshot taken at its first look).
 */
async function lockWaiters(admin: pg.Client): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'plant-store/%' AND wait_event_type = 'Lock'",
  );
  return rows[0]!.n;
}

/** Waits until `count` of the service's sessions wait for a lock (each one a main-pool connection held). */
async function untilWaiting(admin: pg.Client, count: number): Promise<void> {
  await until(async () => (await lockWaiters(admin)) >= count, `${count} writes to wait on the lock`);
}

/** Waits until the service has exactly `count` sessions on this database (its pools' connections). */
async function untilSessions(url: string, count: number, what: string): Promise<void> {
  const observer = new pg.Client({ connectionString: url });
  await observer.connect();
  try {
    let sessions = 0;
    await until(async () => {
      const { rows } = await observer.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'plant-store/%'",
      );
      sessions = rows[0]!.n;
      return sessions === count;
    }, `${count} sessions of the store (${what})`).catch((error: Error) => assert.fail(`${error.message}: ${sessions} sessions`));
  } finally {
    await observer.end();
  }
}

/** Settles with what `promise` settles with, noting the order in which the promises handed here settled. */
function noted<T>(order: string[], name: string, promise: Promise<T>): Promise<T> {
  return promise.finally(() => order.push(name));
}

if (skipReason) {
  test('PostgreSQL read connections', { skip: skipReason }, () => {});
} else {
  const server = await TestPostgres.start(after);
  const POOL_SIZE = 2;

  /**
   * A store whose main pool (POOL_SIZE connections) is held by two batches of writes waiting on a table lock
   * the test holds (the group commit sends at most 2 batches at once); plant 1 and a token were written before.
   * `release` lets the writes through; `writes` are their promises.
   */
  async function heldStore(readPoolSize: number) {
    const url = await server.createDatabase();
    // A long timeout: the held writes must not give up (and free their connections) while the test runs.
    const store = await PostgresStore.open(url, { poolSize: POOL_SIZE, readPoolSize, timeoutMs: 60_000 });
    await store.plants.put({ id: 1, name: 'before' });
    await store.tokens.create({ id: 'tok1', name: 'reader', hash: hashToken('secret-of-the-reader'), scopes: ['plants:read'] });
    const [locker, observer] = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })];
    await Promise.all([locker.connect(), observer.connect()]);
    // EXCLUSIVE mode: every write to plants waits; reads (ACCESS SHARE) do not.
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE plants IN EXCLUSIVE MODE');
    const order: string[] = [];
    const first = noted(order, 'write', store.plants.put({ id: 2, name: 'held' }));
    await untilWaiting(observer, 1);
    // Sent while the first batch is in flight: a second batch, on the pool's other connection.
    const second = noted(order, 'write', store.plants.put({ id: 3, name: 'held too' }));
    await untilWaiting(observer, POOL_SIZE);
    const release = async () => {
      await locker.query('COMMIT');
      await Promise.all([locker.end(), observer.end()]);
    };
    after(() => store.close());
    return { store, order, writes: Promise.all([first, second]), release, url };
  }

  describe('postgres read connections', () => {
    it('answers a GET by id, a page, a count and a token look-up while every write connection is held, then sees the writes', async () => {
      const { store, order, writes, release } = await heldStore(1);
      try {
        assert.deepEqual((await store.plants.get(1))?.plant, { id: 1, name: 'before' });
        assert.equal((await store.plants.get(2)) ?? 'absent', 'absent', 'a write not yet committed is not seen');
        const page = await store.plants.page({ limit: 10 });
        assert.equal(page.count, 1);
        assert.deepEqual(
          (JSON.parse(page.json) as Array<{ id: number; name: string }>).map((plant) => plant.name),
          ['before'],
        );
        assert.equal(await store.plants.count(), 1);
        assert.equal((await store.tokens.findActiveByHash(hashToken('secret-of-the-reader')))?.name, 'reader');
        // The writes were still waiting on the lock, holding every connection of the main pool, all along.
        assert.deepEqual(order, []);
      } finally {
        await release();
      }
      await writes;
      // Read your writes: the acknowledged writes are seen at once, through the reads' connections.
      assert.deepEqual((await store.plants.get(2))?.plant, { id: 2, name: 'held' });
      assert.deepEqual((await store.plants.get(3))?.plant, { id: 3, name: 'held too' });
      assert.equal(await store.plants.count(), 3);
    });

    it('with readPoolSize 0, reads share the main pool: a GET waits for a write to give its connection back', async () => {
      const { store, order, writes, release } = await heldStore(0);
      // Queued behind the writes for a connection of the pool: it can only be answered once a write is.
      const read = noted(order, 'read', store.plants.get(1));
      await release();
      await writes;
      assert.deepEqual((await read)?.plant, { id: 1, name: 'before' });
      assert.equal(order[0], 'write');
    });

    it('opens the reads’ connections with the store, before any read', async () => {
      const url = await server.createDatabase();
      const store = await PostgresStore.open(url, { poolSize: POOL_SIZE, readPoolSize: 3, timeoutMs: 5000 });
      try {
        // The main pool opens its connections when used, and the migrator's session is ending: 3 sessions remain.
        await untilSessions(url, 3, 'the 3 of its reads');
      } finally {
        await store.close();
      }
    });

    it('closes the reads’ connections with the store', async () => {
      const { store, writes, release, url } = await heldStore(1);
      await store.plants.get(1);
      await release();
      await writes;
      await store.close();
      await assert.rejects(store.plants.get(1));
      await untilSessions(url, 0, 'none after close');
    });
  });
}
