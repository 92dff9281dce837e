import type pg from 'pg';
import type { Migration } from '../migration.js';
import { liveInstances } from './instances.js';
import { POSTGRES_MIGRATIONS } from './migrations.js';

/**
 * Any constant both sides agree on: the key of the session-level advisory lock that serialises
 * migrations when several instances start at once.
 */
const MIGRATION_LOCK_KEY = '7031642925113512'; // 'plant-store' in spirit; a bigint as text

/** How often an instance waiting for another's migrations asks for the lock again. */
const LOCK_POLL_MS = 200;

/**
 * Applies the migrations not yet recorded in schema_migrations, each in its own transaction (and then
 * its steps, outside any: see store/migration.ts), in version order. The advisory lock makes a second
 * instance wait until the first has finished, then find everything applied. The lock is a session lock,
 * so a crashed migrator releases it. The waiter asks for it again and again rather than blocking in one
 * statement: a statement waiting holds a snapshot, and CREATE INDEX CONCURRENTLY waits for every older
 * snapshot to go, which would be a deadlock.
 *
 * A contracting migration (store/migration.ts) is applied only when no process seen lately knows fewer
 * migrations (instances.ts); else it is held, said in `held` (the store's warnings), and the ones after it
 * are applied all the same: it is applied at a later start, or by `plant-store migrate`, once they have gone.
 * A database holding versions this code does not know (a newer release migrated it) is left as it is.
 */
export async function migratePostgres(
  client: pg.Client | pg.PoolClient,
  migrations: readonly Migration[] = POSTGRES_MIGRATIONS,
): Promise<{ applied: number[]; held: string[] }> {
  const known = migrations.map((m) => m.version);
  // Nothing to do is the common start, and needs no write and no lock (a read-only replica can start).
  const before = await appliedVersions(client);
  if (known.every((version) => before.has(version))) return { applied: [], held: [] };
  const applied: number[] = [];
  const held: string[] = [];
  // Migrations may legitimately take longer than a request's statement timeout.
  await client.query('SET statement_timeout = 0');
  while (!(await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS locked', [MIGRATION_LOCK_KEY])).rows[0]!.locked) {
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
  try {
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    // Read again under the lock: another instance may have applied them while this one waited.
    const versions = await appliedVersions(client);
    for (const migration of migrations) {
      if (versions.has(migration.version)) continue;
      if (migration.contract) {
        const older = (await liveInstances(client)).filter((instance) => instance.schema < migration.version);
        if (older.length > 0) {
          held.push(heldMessage(migration, older));
          continue;
        }
      }
      const record = () => client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        if (!migration.steps) await record();
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
      if (migration.steps) {
        for (const step of migration.steps) {
          if (step.when === undefined || (await holds(client, step.when))) await client.query(step.sql);
        }
        await record();
      }
      applied.push(migration.version);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
  }
  return { applied, held };
}

function heldMessage(migration: Migration, older: Awaited<ReturnType<typeof liveInstances>>): string {
  const running = older.map((i) => `${i.host} pid ${i.pid} runs ${i.release} (seen ${Math.round(i.seenMsAgo / 1000)} s ago)`);
  return (
    `migration ${migration.version} (${migration.name}) is held until every process runs a release that knows it: ${running.join('; ')}; ` +
    'it is applied at the next start or by plant-store migrate once they have stopped (docs/upgrading.md)'
  );
}

/** Whether a query answers true (one row, its one column). */
async function holds(client: pg.Client | pg.PoolClient, query: string): Promise<boolean> {
  const { rows } = await client.query<Record<string, unknown>>(query);
  return rows[0] !== undefined && Object.values(rows[0])[0] === true;
}

async function appliedVersions(client: pg.Client | pg.PoolClient): Promise<Set<number>> {
  const exists = await client.query<{ table: string | null }>("SELECT to_regclass('schema_migrations')::text AS table");
  if (exists.rows[0]?.table == null) return new Set();
  const done = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
  return new Set(done.rows.map((r) => r.version));
}
