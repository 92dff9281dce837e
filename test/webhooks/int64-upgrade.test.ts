import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openConnection, prepare } from '../../src/store/sqlite/connection.js';
import type { Store } from '../../src/store/store.js';
import { openSqlite, tempDir, TEST_PG_ENV } from '../helpers.js';
import { postgresBefore, sqliteBefore } from '../store/older-schema.js';

/**
 * The migration webhook_int64_strings only expands: the endpoints registered before it write numbers, and
 * the release before, whose statements name their columns, keeps registering and reading endpoints on the
 * migrated schema beside this one (what a rolling upgrade runs). Its statements are copied here as it has
 * them (src/store/*\/webhooks.ts at 1.0.0). Runs on SQLite, and on PostgreSQL by
 * test/store/postgres/http.process.test.ts.
 */

const MIGRATION = 'webhook_int64_strings';

/** SQL as the release before runs it: on one store or the other, `?` or `$n` parameters. */
type Run = (sql: { sqlite: string; postgres: string }, params: unknown[]) => Promise<Array<Record<string, unknown>>>;

const INSERT = {
  sqlite: 'INSERT INTO webhook_endpoints (id, url, events, description, enabled, secret, created_at) VALUES (?, ?, ?, ?, 1, ?, ?)',
  postgres: 'INSERT INTO webhook_endpoints (id, url, events, description, enabled, secret, created_at) VALUES ($1, $2, $3, $4, true, $5, $6)',
};
const SELECT = {
  sqlite: 'SELECT id, url, events, description, enabled, disabled_reason, created_at FROM webhook_endpoints WHERE id = ?',
  postgres: 'SELECT id, url, events, description, enabled, disabled_reason, created_at::float8 AS created_at FROM webhook_endpoints WHERE id = $1',
};
const SECRET = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTAx';

/** A store left by the release before (every migration before this one), a way to run its SQL, and the opening of it by this release. */
async function beforeMigration(): Promise<{ run: Run; open: () => Promise<Store>; pg: boolean }> {
  const pgAdminUrl = process.env[TEST_PG_ENV];
  if (pgAdminUrl) {
    const [{ default: pg }, { PostgresStore }, { createDatabase }] = await Promise.all([
      import('pg'),
      import('../../src/store/postgres/store.js'),
      import('../store/postgres/pg-server.js'),
    ]);
    const url = await createDatabase(pgAdminUrl);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    after(() => client.end());
    await postgresBefore(client, MIGRATION);
    const run: Run = async (sql, params) => (await client.query(sql.postgres, params)).rows as Array<Record<string, unknown>>;
    return { run, open: () => PostgresStore.open(url, { poolSize: 4, readPoolSize: 2, timeoutMs: 5000 }), pg: true };
  }
  const dir = tempDir(after);
  const db = openConnection(join(dir, 'plants.db'));
  after(() => db.close());
  sqliteBefore(db, MIGRATION);
  const run: Run = (sql, params) => {
    const statement = prepare(db, sql.sqlite);
    return Promise.resolve(statement.reader ? (statement.all(...params) as Array<Record<string, unknown>>) : (statement.run(...params), []));
  };
  return { run, open: () => Promise.resolve(openSqlite(dir)), pg: false };
}

describe('the migration webhook_int64_strings', () => {
  it('leaves the endpoints made before writing numbers, and the release before registering and reading endpoints beside this one', async () => {
    const { run, open, pg } = await beforeMigration();
    const events = (list: string[]) => (pg ? list : list.join(' '));
    await run(INSERT, ['ep_01JDQ7R6ZP3N2XW9K4T8VB5M0A', 'https://hooks.example/before', events(['plant.created']), null, SECRET, 1_700_000_000_000]);
    const store = await open();
    after(() => store.close());

    const earlier = await store.webhooks.getEndpoint('ep_01JDQ7R6ZP3N2XW9K4T8VB5M0A');
    assert.deepEqual(earlier, {
      id: 'ep_01JDQ7R6ZP3N2XW9K4T8VB5M0A',
      url: 'https://hooks.example/before',
      events: ['plant.created'],
      enabled: true,
      createdAt: 1_700_000_000_000,
    });
    assert.equal((await store.webhooks.updateEndpoint(earlier.id, { int64: 'string' }))?.int64, 'string');

    // The release before, on the migrated schema: registers an endpoint, reads one this release set to strings.
    await run(INSERT, ['ep_01JDQ7R6ZP3N2XW9K4T8VB5M0B', 'https://hooks.example/old', events(['plant.created']), 'old', SECRET, 1_700_000_000_001]);
    const [read] = await run(SELECT, [earlier.id]);
    assert.deepEqual(Object.keys(read!).sort(), ['created_at', 'description', 'disabled_reason', 'enabled', 'events', 'id', 'url']);
    assert.equal(read!.url, 'https://hooks.example/before');
    const made = await store.webhooks.getEndpoint('ep_01JDQ7R6ZP3N2XW9K4T8VB5M0B');
    assert.equal(made && 'int64' in made, false, 'what the release before registers writes numbers');

    await store.plants.put({ id: 9007199254740993n, name: 'Fern' });
    const claimed = await store.webhooks.claimDue(10, 60_000);
    assert.deepEqual(claimed.map((m) => [m.endpointId, m.int64]).sort(), [
      ['ep_01JDQ7R6ZP3N2XW9K4T8VB5M0A', 'string'],
      ['ep_01JDQ7R6ZP3N2XW9K4T8VB5M0B', undefined],
    ]);
  });
});
