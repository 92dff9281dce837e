import { mkdirSync } from 'node:fs';
import type { after } from 'node:test';
import { join } from 'node:path';
import pg from 'pg';
import { openStore } from '../src/store/open.js';
import { CATALOGUE_NAME_PARAMS, CATALOGUE_NAME_SQL, SEED_NAME_PARAMS, SEED_NAME_SQL, type SeedNames } from './names.js';
import { seedSqlite } from './seed.js';

/**
 * Where the service under test keeps its plants: a DATABASE_URL per service run. A write scenario gets
 * a fresh, empty store for every run; a read scenario gets a store seeded once, in bulk, straight
 * through the database (seeding a million plants over HTTP would outlast the benchmark).
 */
export interface BenchStore {
  label: string;
  /** A fresh store (0), or one of `seeded` plants named as `names` says, made once and shared by the runs. */
  url(seeded: number, names?: SeedNames): Promise<string>;
  close(): Promise<void>;
}

export function sqliteStores(dir: string): BenchStore {
  let fresh = 0;
  const seededUrls = new Map<string, string>();
  return {
    label: 'SQLite (synchronous=FULL, WAL)',
    async url(seeded, names = 'varied') {
      if (seeded === 0) {
        const runDir = join(dir, `empty-${++fresh}`);
        mkdirSync(runDir, { recursive: true });
        return `file:${join(runDir, 'plant-store.db')}`;
      }
      const key = `seeded-${seeded}${names === 'varied' ? '' : `-${names}`}`;
      const known = seededUrls.get(key);
      if (known) return known;
      const path = join(dir, key, 'plant-store.db');
      mkdirSync(join(dir, key), { recursive: true });
      await seedSqlite(path, seeded, names);
      seededUrls.set(key, `file:${path}`);
      return `file:${path}`;
    },
    async close() {},
  };
}

async function seedPostgres(url: string, count: number, names: SeedNames): Promise<void> {
  const [nameSql, nameParams] = names === 'catalogue' ? [CATALOGUE_NAME_SQL, CATALOGUE_NAME_PARAMS] : [SEED_NAME_SQL, SEED_NAME_PARAMS];
  // The service's own migrations make the schema; generate_series fills it in one statement.
  const store = await openStore({ databaseUrl: url, sqliteSynchronous: 'FULL', dbTimeoutMs: 60_000, pgPoolSize: 1, writeQueueLimit: 10_000 });
  await store.close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // The service's triggers fold each name (for search), as they would for any write.
    await client.query(
      `INSERT INTO plants (id, name, tag)
       SELECT g, ${nameSql}, (ARRAY['tropical','succulent','fern',NULL])[g % 4 + 1] FROM generate_series(1, $1::bigint) g`,
      [count, ...nameParams],
    );
    await client.query('VACUUM ANALYZE plants');
  } finally {
    await client.end();
  }
}

/**
 * PostgreSQL: the server DATABASE_URL names, or (--postgres) a throwaway local cluster started by the
 * tests' harness, switched back to full durability (fsync, synchronous_commit) for a fair measurement.
 * Each scenario gets its own database.
 */
export async function postgresStores(givenUrl: string | undefined): Promise<BenchStore> {
  const cleanups: Array<() => Promise<void> | void> = [];
  let createDatabase: () => Promise<string>;
  let label: string;
  if (givenUrl) {
    const admin = givenUrl;
    let n = 0;
    createDatabase = async () => {
      const name = `plant_store_bench_${process.pid}_${++n}`;
      const client = new pg.Client({ connectionString: admin });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      } finally {
        await client.end();
      }
      cleanups.push(async () => {
        const c = new pg.Client({ connectionString: admin });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`).finally(() => c.end());
      });
      const url = new URL(admin);
      url.pathname = `/${name}`;
      return url.toString();
    };
    label = 'PostgreSQL (DATABASE_URL)';
  } else {
    const { TestPostgres } = await import('../test/store/postgres/pg-server.js');
    const register = ((fn: () => Promise<void> | void) => cleanups.push(fn)) as unknown as typeof after;
    try {
      const server = await TestPostgres.start(register);
      const client = new pg.Client({ connectionString: server.url('postgres') });
      await client.connect();
      try {
        for (const setting of ['fsync = on', 'synchronous_commit = on', 'full_page_writes = on', "shared_buffers = '128MB'"]) {
          await client.query(`ALTER SYSTEM SET ${setting}`);
        }
      } finally {
        await client.end();
      }
      // shared_buffers needs a restart.
      await server.stop('fast');
      await server.startServer();
      createDatabase = () => server.createDatabase();
    } catch (error) {
      for (const cleanup of cleanups.reverse()) await cleanup();
      throw error;
    }
    label = 'PostgreSQL 15, local throwaway cluster (fsync=on, synchronous_commit=on)';
  }
  const seededUrls = new Map<string, string>();
  return {
    label,
    async url(seeded, names = 'varied') {
      if (seeded === 0) return createDatabase();
      const key = `${seeded}-${names}`;
      const known = seededUrls.get(key);
      if (known) return known;
      const url = await createDatabase();
      await seedPostgres(url, seeded, names);
      seededUrls.set(key, url);
      return url;
    },
    async close() {
      for (const cleanup of cleanups.reverse()) await cleanup();
    },
  };
}
