import assert from 'node:assert/strict';
import { after, describe, it, test } from 'node:test';
import pg from 'pg';
import { PostgresStore } from '../../../src/store/postgres/store.js';
import { FEED_START } from '../../../src/store/event-store.js';
import type { Store } from '../../../src/store/store.js';
import { postgresUnavailableReason, TestPostgres } from './pg-server.js';
import { needs, until } from '../../toolkit.js';

/**
 * An import on PostgreSQL while another writer commits a plant of an id it
 * imports: the import runs at READ COMMITTED, so its answer and its events must say what its merge did,
 * and create-only must refuse what it would replace, whatever was committed after the import began (it
 * once counted and announced before merging: the plant counted created, announced plant.created, and
 * replaced; create-only replaced it and answered 200).
 */

const skipReason = needs('PostgreSQL import races', postgresUnavailableReason());

if (skipReason) {
  test('PostgreSQL import races', { skip: skipReason }, () => {});
} else {
  const server = await TestPostgres.start(after);

  /** A store holding plant 9, an import of plants 1 and 2 staged, and another writer holding plant 2 uncommitted. */
  async function racing(): Promise<{ store: Store; other: pg.Client; session: Awaited<ReturnType<Store['plants']['startImport']>> }> {
    const url = await server.createDatabase();
    const store = await PostgresStore.open(url, { poolSize: 4, readPoolSize: 2, timeoutMs: 5000 });
    await store.plants.put({ id: 9, name: 'there before' });
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    const session = await store.plants.startImport();
    await session.add([
      { id: 1, name: 'one' },
      { id: 2, name: 'two' },
    ]);
    await other.query("BEGIN; INSERT INTO plants (id, name, version) VALUES (2, 'meanwhile', nextval('plant_version'))");
    return { store, other, session };
  }

  /** Commits the other writer once the import waits on its plant. */
  async function commitWhenWaitedOn(other: pg.Client): Promise<void> {
    await until(async () => {
      const { rows } = await other.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      return rows[0]!.n > 0;
    }, 'the import to wait on the other writer');
    await other.query('COMMIT');
  }

  describe('a PostgreSQL import racing another writer', () => {
    it('into a store seen empty, whose plant of an imported id commits meanwhile: merged as into any store, the plant replaced', async () => {
      const url = await server.createDatabase();
      const store = await PostgresStore.open(url, { poolSize: 4, readPoolSize: 2, timeoutMs: 5000 });
      const other = new pg.Client({ connectionString: url });
      await other.connect();
      try {
        const session = await store.plants.startImport();
        await session.add([
          { id: 1, name: 'one' },
          { id: 2, name: 'two' },
        ]);
        // Another writer's plant 2, not committed yet: the import sees an empty store and its plain insert waits on the key.
        await other.query("BEGIN; INSERT INTO plants (id, name, version) VALUES (2, 'meanwhile', nextval('plant_version'))");
        const committing = session.commit({ createOnly: false });
        await commitWhenWaitedOn(other);
        assert.deepEqual(await committing, { created: 1, replaced: 1 });
        assert.deepEqual((await store.plants.get(2))?.plant, { id: 2, name: 'two' });
        assert.deepEqual((await store.plants.get(1))?.plant, { id: 1, name: 'one' });
        const events = await store.events.read({ after: FEED_START, limit: 10 });
        assert.deepEqual(
          events.map((e) => (JSON.parse(e.body) as { type: string }).type),
          ['plant.created', 'plant.updated'],
        );
      } finally {
        await other.end();
        await store.close();
      }
    });

    it('replaces the plant committed meanwhile, and counts and announces it as replaced', async () => {
      const { store, other, session } = await racing();
      try {
        const committing = session.commit({ createOnly: false });
        await commitWhenWaitedOn(other);
        assert.deepEqual(await committing, { created: 1, replaced: 1 });
        assert.deepEqual((await store.plants.get(2))?.plant, { id: 2, name: 'two' });
        const events = await store.events.read({ after: FEED_START, limit: 10 });
        assert.deepEqual(
          events.map((e) => JSON.parse(e.body) as { type: string; data: { id: string } }).map((e) => `${e.type} ${e.data.id}`),
          ['plant.created 9', 'plant.created 1', 'plant.updated 2'],
        );
      } finally {
        await other.end();
        await store.close();
      }
    });

    it('create-only: refuses the import, naming the plant committed meanwhile, and keeps nothing of it', async () => {
      const { store, other, session } = await racing();
      try {
        // Its refusal awaited from the start: it may come before the other writer's COMMIT has answered.
        const refused = assert.rejects(
          session.commit({ createOnly: true }),
          (e: Error) => e.name === 'ImportConflictError' && e.message.includes('id 2'),
        );
        await commitWhenWaitedOn(other);
        await refused;
        await session.abort();
        assert.deepEqual((await store.plants.get(2))?.plant, { id: 2, name: 'meanwhile' });
        assert.equal(await store.plants.get(1), undefined, 'nothing of the refused import');
        const events = await store.events.read({ after: FEED_START, limit: 10 });
        assert.equal(events.length, 1, 'the import announced nothing');
      } finally {
        await other.end();
        await store.close();
      }
    });

    it('two imports of the same plants in opposite orders both commit, without a deadlock', async () => {
      const url = await server.createDatabase();
      const store = await PostgresStore.open(url, { poolSize: 6, readPoolSize: 2, timeoutMs: 10_000 });
      // The other writer, and a session outside its transaction to watch (a transaction sees one snapshot of the statistics).
      const [other, watcher] = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })];
      await Promise.all([other.connect(), watcher.connect()]);
      const deadlocks = async () =>
        Number((await watcher.query<{ n: string }>('SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()')).rows[0]!.n);
      try {
        await other.query("INSERT INTO plants (id, name, version) SELECT g, 'p' || g, nextval('plant_version') FROM generate_series(1, 200) g");
        const ids = Array.from({ length: 200 }, (_, i) => i + 1);
        const sessions = await Promise.all(
          [ids, [...ids].reverse()].map(async (order, n) => {
            const session = await store.plants.startImport();
            await session.add(order.map((id) => ({ id, name: `import ${n} of ${id}` })));
            return session;
          }),
        );
        const before = await deadlocks();
        // Plant 100 held by another writer: each import locks the plants before it in its order, then waits
        // there. Locking in the rows' order, the two then held what the other needed next once 100 was free.
        await other.query("BEGIN; UPDATE plants SET name = 'held' WHERE id = 100");
        const commits = sessions.map((session) => session.commit({ createOnly: false }));
        await until(async () => {
          const { rows } = await watcher.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          );
          return rows[0]!.n >= 2;
        }, 'both imports to wait');
        await other.query('COMMIT');
        const settled = await Promise.allSettled(commits);
        // A refused import gives its connection back (as the route does), so that the store closes.
        for (const [n, session] of sessions.entries()) if (settled[n]!.status === 'rejected') await session.abort();
        assert.deepEqual(
          settled.map((s) => (s.status === 'fulfilled' ? s.value : String(s.reason))),
          [
            { created: 0, replaced: 200 },
            { created: 0, replaced: 200 },
          ],
        );
        assert.equal((await deadlocks()) - before, 0, 'no deadlock');
        const events = await store.events.read({ after: FEED_START, limit: 1000 });
        assert.equal(events.length, 400, 'each import announced its 200 plants');
      } finally {
        await Promise.all([other.end(), watcher.end()]);
        await store.close();
      }
    });
  });
}
