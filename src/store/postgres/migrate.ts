import type pg from 'pg';
import { POSTGRES_MIGRATIONS } from './migrations.js';

/**
 * Any constant both sides agree on: the key of the session-level advisory lock that serialises
 * migrations when several instances start at once.
 */
const MIGRATION_LOCK_KEY = '7031642925113512'; // 'plant-store' in spirit; a bigint as text

/**
 * Applies the migrations not yet recorded in schema_migrations, each in its own transaction, in
 * version order. The advisory lock makes a second instance wait until the first has finished, then
 * find everything applied. The lock is a session lock, so a crashed migrator releases it.
 */
export async function migratePostgres(client: pg.Client | pg.PoolClient): Promise<number[]> {
  const migrations = POSTGRES_MIGRATIONS;
  // Nothing to do is the common start, and needs no write and no lock (a read-only replica can start).
  if ((await appliedVersions(client)).size === migrations.length) return [];
  const applied: number[] = [];
  // Migrations may legitimately take longer than a request's statement timeout.
  await client.query('SET statement_timeout = 0');
  await client.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
  try {
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    // Read again under the lock: another instance may have applied them while this one waited.
    const versions = await appliedVersions(client);
    for (const migration of migrations) {
      if (versions.has(migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
      applied.push(migration.version);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
  }
  return applied;
}

async function appliedVersions(client: pg.Client | pg.PoolClient): Promise<Set<number>> {
  const exists = await client.query<{ table: string | null }>("SELECT to_regclass('schema_migrations')::text AS table");
  if (exists.rows[0]?.table == null) return new Set();
  const done = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
  return new Set(done.rows.map((r) => r.version));
}
