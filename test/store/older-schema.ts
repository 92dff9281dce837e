import type pg from 'pg';
import { prepare, type Connection } from '../../src/store/sqlite/connection.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import type { Migration } from '../../src/store/migration.js';

/**
 * A store as an earlier release left it: the migrations before the one named applied and recorded, as
 * the service would have, so that a test (or bench/search-costs.ts) can fill it and then open it with the
 * service, which applies the rest. By name rather than number: numbers change when branches merge.
 */

function before(migrations: Migration[], name: string): Migration[] {
  const at = migrations.findIndex((m) => m.name === name);
  if (at === -1) throw new Error(`no migration named ${name}`);
  return migrations.slice(0, at);
}

export function sqliteBefore(db: Connection, name: string): void {
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  for (const m of before(SQLITE_MIGRATIONS, name)) {
    db.exec(m.sql);
    prepare(db, 'INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
  }
}

export async function postgresBefore(client: pg.ClientBase, name: string): Promise<void> {
  await client.query(
    'CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
  );
  for (const m of before(POSTGRES_MIGRATIONS, name)) {
    await client.query(m.sql);
    for (const step of m.steps ?? []) await client.query(step.sql);
    await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
  }
}
