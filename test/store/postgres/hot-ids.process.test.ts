import assert from 'node:assert/strict';
import { after, describe, it, test } from 'node:test';
import pg from 'pg';
import { PostgresStore } from '../../../src/store/postgres/store.js';
import { FEED_START } from '../../../src/store/event-store.js';
import { postgresUnavailableReason, TestPostgres } from './pg-server.js';
import { needs } from '../../toolkit.js';

/**
 * Writes to a few plants from two instances at once, on PostgreSQL: batches of several statements (the
 * same id twice in a batch, a patch among puts) lock their plants in id order before their first
 * statement, so that no two batches deadlock. They did, every run at a few hot ids, and the retries
 * deadlocked again: 503s for plain puts and patches (a deadlock costs deadlock_timeout, a second).
 */

const skipReason = needs('PostgreSQL hot ids', postgresUnavailableReason());

if (skipReason) {
  test('PostgreSQL hot ids', { skip: skipReason }, () => {});
} else {
  const server = await TestPostgres.start(after);

  describe('two instances writing to five plants at once', () => {
    it('commit every write, deadlock-free, each announced once', async () => {
      const url = await server.createDatabase();
      const stores = await Promise.all([0, 1].map(() => PostgresStore.open(url, { poolSize: 4, readPoolSize: 2, timeoutMs: 10_000 })));
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      const deadlocks = async () =>
        Number((await admin.query<{ n: string }>('SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()')).rows[0]!.n);
      try {
        for (let id = 1; id <= 5; id++) await stores[0]!.plants.put({ id, name: `hot ${id}` });
        const before = await deadlocks();
        // 24 clients, 10 writes each, in arrival orders that differ: puts of each id and patches, so that
        // batches hold the same id twice (several statements) and share ids with the other instance's.
        const clients = Array.from({ length: 24 }, async (_, client) => {
          const store = stores[client % 2]!;
          for (let n = 0; n < 10; n++) {
            const id = ((client * 7 + n * (client % 2 === 0 ? 3 : 2)) % 5) + 1;
            if (n % 3 === 2) await store.plants.patch(id, { tag: `c${client}` });
            else await store.plants.put({ id, name: `hot ${id} by ${client}.${n}` });
          }
        });
        const settled = await Promise.allSettled(clients);
        const failed = settled.filter((s) => s.status === 'rejected').map((s) => String(s.reason));
        assert.deepEqual(failed, [], 'every write committed');
        assert.equal((await deadlocks()) - before, 0, 'no deadlock');
        const events = await stores[0]!.events.read({ after: FEED_START, limit: 1000 });
        assert.equal(events.length, 5 + 240, 'each write announced once');
      } finally {
        await admin.end();
        await Promise.all(stores.map((store) => store.close()));
      }
    });
  });
}
