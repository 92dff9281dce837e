import assert from 'node:assert/strict';
import { after, describe, it, test } from 'node:test';
import { createServer, type Socket } from 'node:net';
import pg from 'pg';
import { bootstrapToken } from '../../../src/auth/bootstrap.js';
import { POSTGRES_MIGRATIONS } from '../../../src/store/postgres/migrations.js';
import { PostgresStore } from '../../../src/store/postgres/store.js';
import { isUnavailable } from '../../../src/store/postgres/errors.js';
import { StoreUnavailableError, type Store } from '../../../src/store/store.js';
import { storeContract } from '../contract.js';
import { eventContract } from '../event-contract.js';
import { importContract } from '../import-contract.js';
import { idempotencyContract } from '../idempotency-contract.js';
import { searchContract } from '../search-contract.js';
import { searchWalkContract } from '../search-walk-contract.js';
import { searchDifferentialContract } from '../search-differential-contract.js';
import { searchIndexContract } from '../search-index-contract.js';
import { webhookContract } from '../webhook-contract.js';
import { webhookInt64Contract } from '../webhook-int64-contract.js';
import { postgresUnavailableReason, TestPostgres } from './pg-server.js';
import { needs } from '../../toolkit.js';

const skipReason = needs('PostgreSQL store tests', postgresUnavailableReason());

/** A loopback port nothing listens on: connections are refused at once. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** A loopback port that accepts connections and never says a word, as a frozen or partitioned server. */
async function silentPort(): Promise<number> {
  const held: Socket[] = [];
  const silent = createServer((socket) => held.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  after(() => {
    for (const socket of held) socket.destroy();
    silent.close();
  });
  return (silent.address() as { port: number }).port;
}

if (skipReason) {
  test('PostgreSQL store', { skip: skipReason }, () => {});
} else {
  const server = await TestPostgres.start(after);
  const open = async (url?: string) => PostgresStore.open(url ?? (await server.createDatabase()), { poolSize: 4, readPoolSize: 2, timeoutMs: 5000 });

  storeContract('postgres', () => open());
  webhookContract('postgres', () => open());
  webhookInt64Contract('postgres', () => open());
  searchContract('postgres', () => open());
  searchWalkContract('postgres', () => open());
  searchDifferentialContract('postgres', () => open(), {
    openPair: async () => {
      const url = await server.createDatabase();
      return Promise.all([open(url), open(url)]);
    },
  });
  searchIndexContract(
    'postgres',
    () => open(),
    async () => {
      const url = await server.createDatabase();
      return Promise.all([open(url), open(url)]);
    },
  );
  /** Each contract store's database, for the event contract to reach its tables. */
  const storeUrls = new WeakMap<Store, string>();
  eventContract(
    'postgres',
    async () => {
      const url = await server.createDatabase();
      const store = await open(url);
      storeUrls.set(store, url);
      return store;
    },
    async (store, id, at) => {
      const client = new pg.Client({ connectionString: storeUrls.get(store)! });
      await client.connect();
      try {
        await client.query('UPDATE event_commits SET at = $2 WHERE key = (SELECT key FROM events WHERE id = $1)', [id, at]);
      } finally {
        await client.end();
      }
    },
  );
  importContract('postgres', () => open());
  idempotencyContract('postgres', () => open());

  describe('postgres store', () => {
    it('applies migrations once, recorded, even when several instances start at once', async () => {
      const url = await server.createDatabase();
      const stores = await Promise.all(Array.from({ length: 4 }, () => open(url)));
      await stores[0]!.plants.put({ id: 2n ** 62n, name: 'kept' });
      assert.deepEqual((await stores[3]!.plants.get(2n ** 62n))?.plant, { id: 2n ** 62n, name: 'kept' });
      await Promise.all(stores.map((s) => s.close()));
      const again = await open(url);
      assert.deepEqual((await again.plants.get(2n ** 62n))?.plant, { id: 2n ** 62n, name: 'kept' });
      await again.close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version');
      await client.end();
      assert.deepEqual(
        rows,
        POSTGRES_MIGRATIONS.map(({ version, name }) => ({ version, name })),
      );
      assert.equal(rows[0]?.name, 'plants_and_tokens');
    });

    it('stores ids in a bigint column, exactly', async () => {
      const url = await server.createDatabase();
      const store = await open(url);
      await store.plants.put({ id: 2n ** 63n - 1n, name: 'max' });
      await store.plants.put({ id: -(2n ** 63n), name: 'min' });
      await store.close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query<{ id: string; type: string }>('SELECT id::text AS id, pg_typeof(id)::text AS type FROM plants ORDER BY id');
      await client.end();
      assert.deepEqual(rows, [
        { id: '-9223372036854775808', type: 'bigint' },
        { id: '9223372036854775807', type: 'bigint' },
      ]);
    });

    it('fails to open an unreachable database as unavailable, within the timeout', async () => {
      const url = `postgres://postgres@127.0.0.1:1/none`;
      await assert.rejects(PostgresStore.open(url, { poolSize: 1, timeoutMs: 1000 }), StoreUnavailableError);
    });

    it('finds the primary among several hosts, past one that refuses connections and one that never answers', async () => {
      const database = new URL(await server.createDatabase()).pathname;
      const [refusing, silent] = [await closedPort(), await silentPort()];
      const store = await open(`postgres://postgres@127.0.0.1:${refusing},127.0.0.1:${silent},127.0.0.1:${server.port}${database}`);
      try {
        await store.plants.put({ id: 1, name: 'found' });
        assert.deepEqual((await store.plants.get(1))?.plant, { id: 1, name: 'found' });
        await store.ping();
      } finally {
        await store.close();
      }
    });

    it('gives up at the timeout however many hosts it tries, as unavailable', async () => {
      const silent = await Promise.all(Array.from({ length: 5 }, () => silentPort()));
      const hosts = [await closedPort(), ...silent].map((port) => `127.0.0.1:${port}`);
      const started = Date.now();
      await assert.rejects(
        PostgresStore.open(`postgres://postgres@${hosts.join(',')}/none`, { poolSize: 1, timeoutMs: 1500 }),
        StoreUnavailableError,
      );
      const took = Date.now() - started;
      // The bounds are the point: at about the 1.5 s time-out (it gives up when the pause before another pass,
      // 200 ms, would cross it: a lower bound, which a loaded machine only lengthens), and well before the
      // 7.5 s that five silent hosts would take with a time-out each; the gap between is a loaded machine's room.
      assert.ok(took >= 1000 && took < 6000, `gave up after ${took} ms`);
    });

    it('treats a read-only database as unavailable for writes and not ready, and a bad statement as a bug', async () => {
      const url = await server.createDatabase();
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      const store = await open(url);
      try {
        await store.plants.put({ id: 1, name: 'a' });
        const name = new URL(url).pathname.slice(1);
        await admin.query(`ALTER DATABASE ${pg.escapeIdentifier(name)} SET default_transaction_read_only = on`);
        // A fresh store: the setting applies to new sessions.
        const readOnly = await open(url);
        try {
          assert.deepEqual((await readOnly.plants.get(1))?.plant, { id: 1, name: 'a' });
          await assert.rejects(readOnly.plants.put({ id: 2, name: 'b' }), StoreUnavailableError);
          // Not ready: readiness asks for a primary that can take writes.
          await assert.rejects(
            readOnly.ping(),
            (error: Error) => error instanceof StoreUnavailableError && /is a read-only primary, not a writable primary/.test(error.message),
          );
        } finally {
          await readOnly.close();
          await admin.query(`ALTER DATABASE ${pg.escapeIdentifier(name)} RESET default_transaction_read_only`);
        }
        const syntax = await admin.query('SELEC 1').catch((error: unknown) => error);
        assert.equal(isUnavailable(syntax), false);
      } finally {
        await store.close();
        await admin.end();
      }
    });

    it('makes one first token when several instances bootstrap an empty database at once', async () => {
      const url = await server.createDatabase();
      const stores = await Promise.all([open(url), open(url), open(url)]);
      await Promise.all(stores.map((store) => store.ping())); // connected: the race is not decided by connection set-up
      const printed: string[] = [];
      // All three count zero tokens before any creates one; the partial unique index lets one win.
      await Promise.all(
        stores.map((store) => bootstrapToken(store, { tokens: [], databaseUrl: url, host: '127.0.0.1', port: 8080 }, (text) => printed.push(text))),
      );
      assert.equal(printed.length, 1);
      assert.equal(await stores[0].tokens.count(), 1);
      await Promise.all(stores.map((s) => s.close()));
    });

    it('answers ping with StoreUnavailableError once closed', async () => {
      const store = await open();
      await store.ping();
      await store.close();
      await assert.rejects(store.ping(), StoreUnavailableError);
    });
  });
}
