import assert from 'node:assert/strict';
import { after, describe, it, test } from 'node:test';
import pg from 'pg';
import type { Migration } from '../../../src/store/migration.js';
import { LIVE_MS } from '../../../src/store/postgres/instances.js';
import { migratePostgres } from '../../../src/store/postgres/migrate.js';
import { POSTGRES_MIGRATIONS } from '../../../src/store/postgres/migrations.js';
import { PostgresStore } from '../../../src/store/postgres/store.js';
import { VERSION } from '../../../src/version.js';
import { cli } from '../../process.js';
import { postgresUnavailableReason, TestPostgres } from './pg-server.js';

/**
 * The registry of processes on a PostgreSQL database (store/postgres/instances.ts): each process that opens
 * the store says which release it runs and which migrations its code knows, and a contracting migration
 * waits until no process knowing fewer is running.
 */

const skip = postgresUnavailableReason();
const NEWEST = POSTGRES_MIGRATIONS.at(-1)!.version;

interface Row {
  id: string;
  pid: number;
  release: string;
  schema: number;
}

async function connected(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  after(() => client.end());
  return client;
}

/** A process of an older release, as its row says: seen `agoMs` ago, knowing migrations up to `schema`. */
async function olderProcess(client: pg.Client, schema: number, agoMs: number): Promise<void> {
  const now = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';
  await client.query(
    `INSERT INTO instances (id, host, pid, release, schema, started_at, seen_at) VALUES ('old-host:4242:abcd', 'old-host', 4242, '0.9.0', $1, ${now} - $2, ${now} - $2)`,
    [schema, agoMs],
  );
}

async function appliedVersions(client: pg.Client): Promise<number[]> {
  return (await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((row) => row.version);
}

if (skip) process.stderr.write(`\n*** SKIPPING the PostgreSQL registry tests: ${skip} ***\n\n`);

const server = skip ? undefined : await TestPostgres.start(after);

describe('the registry of processes on a PostgreSQL database', { skip }, () => {
  const open = (url: string) => PostgresStore.open(url, { poolSize: 2, timeoutMs: 5000 });

  it('holds a row for each process with the store open, with its release and schema, gone when it closes', async () => {
    const url = await server!.createDatabase();
    const [one, two] = await Promise.all([open(url), open(url)]);
    const client = await connected(url);
    const rows = (await client.query<Row>('SELECT id, pid, release, schema FROM instances ORDER BY id')).rows;
    assert.deepEqual(
      rows.map((row) => [row.pid, row.release, row.schema]),
      [
        [process.pid, VERSION, NEWEST],
        [process.pid, VERSION, NEWEST],
      ],
    );
    assert.deepEqual(rows.map((row) => row.id).sort(), [one.registry.id, two.registry.id].sort());
    await one.close();
    assert.deepEqual((await client.query<Row>('SELECT id FROM instances')).rows, [{ id: two.registry.id }]);
    await two.close();
    assert.equal((await client.query('SELECT id FROM instances')).rowCount, 0);
  });

  it("forgets a process unseen for an hour (killed without closing), at the next process's beat", async () => {
    const url = await server!.createDatabase();
    await (await open(url)).close();
    const client = await connected(url);
    await olderProcess(client, NEWEST, 2 * 3_600_000);
    const store = await open(url);
    assert.deepEqual((await client.query<Row>('SELECT id FROM instances')).rows, [{ id: store.registry.id }]);
    await store.close();
  });

  it('registers a CLI command while it runs, and leaves nothing behind', async () => {
    const url = await server!.createDatabase();
    const migrated = await cli(url, 'migrate');
    assert.equal(migrated.code, 0, migrated.stderr);
    const client = await connected(url);
    assert.equal((await client.query('SELECT id FROM instances')).rowCount, 0);
  });

  describe('a contracting migration', () => {
    const contract: Migration = { version: NEWEST + 1, name: 'drop_tag', sql: 'ALTER TABLE plants DROP COLUMN tag', contract: true };
    const expand: Migration = { version: NEWEST + 2, name: 'plant_notes', sql: 'ALTER TABLE plants ADD COLUMN notes text' };
    const migrations = [...POSTGRES_MIGRATIONS, contract, expand];

    it('is held while a process that does not know it runs, the later ones applied meanwhile; applied once it has gone', async () => {
      const url = await server!.createDatabase();
      await (await open(url)).close();
      const client = await connected(url);
      await olderProcess(client, NEWEST, 0);
      const first = await migratePostgres(client, migrations);
      assert.deepEqual(first.applied, [expand.version]);
      assert.equal(first.held.length, 1);
      assert.match(
        first.held[0]!,
        new RegExp(
          `^migration ${contract.version} \\(drop_tag\\) is held until every process runs a release that knows it: old-host pid 4242 runs 0\\.9\\.0 \\(seen \\d+ s ago\\); `,
        ),
      );
      assert.ok(!(await appliedVersions(client)).includes(contract.version));
      assert.equal((await client.query("SELECT 1 FROM information_schema.columns WHERE table_name = 'plants' AND column_name = 'tag'")).rowCount, 1);

      // Still running a little later: held again. Then unseen for LIVE_MS: gone.
      assert.equal((await migratePostgres(client, migrations)).held.length, 1);
      await client.query('UPDATE instances SET seen_at = seen_at - $1', [LIVE_MS + 1000]);
      const second = await migratePostgres(client, migrations);
      assert.deepEqual(second, { applied: [contract.version], held: [] });
      assert.deepEqual((await appliedVersions(client)).slice(-2), [contract.version, expand.version]);
      assert.equal((await client.query("SELECT 1 FROM information_schema.columns WHERE table_name = 'plants' AND column_name = 'tag'")).rowCount, 0);
    });

    it('is applied at once when every process running knows it', async () => {
      const url = await server!.createDatabase();
      await (await open(url)).close();
      const client = await connected(url);
      await olderProcess(client, contract.version, 0);
      assert.deepEqual(await migratePostgres(client, migrations), { applied: [contract.version, expand.version], held: [] });
    });
  });
});

test('SQLite refuses a contracting migration: its contracts wait for the next release', async () => {
  const { checked } = await import('../../../src/store/migration.js');
  assert.throws(
    () => checked('sqlite', [{ version: 1, name: 'plants_and_tokens', sql: '', contract: true }]),
    /sqlite migration 1 \(plants_and_tokens\) is a contract: on SQLite a contracting change waits for the next release/,
  );
});
