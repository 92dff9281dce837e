import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openConnection, prepare } from '../src/store/sqlite/connection.js';
import { SqliteStore } from '../src/store/sqlite/store.js';
import { PostgresStore } from '../src/store/postgres/store.js';
import type { Store } from '../src/store/store.js';
import { postgresBefore, sqliteBefore } from '../test/store/older-schema.js';
import { SEED_NAME_PARAMS, SEED_NAME_SQL, SEED_TAGS, seedName } from './names.js';

/**
 * What finding plants costs a store of a million plants (issue 19), measured in one run:
 * - the migration that adds it (SQLite 4, PostgreSQL 5) on a store that holds them: how long, and on
 *   PostgreSQL how long a write made meanwhile by another client waits at most;
 * - the disk it takes: the folded names and each index;
 * - what its indexes cost a write: the store's own writes (put, through its group commit), one at a time
 *   and 64 at once, with the search indexes and with them dropped, alternately, in the same run.
 *
 * npm run bench:search -- [--plants=1000000] [--writes=3000] [--postgres [--without=all|trgm]]  (--postgres: a throwaway
 * local cluster, as npm run bench -- --postgres makes, or DATABASE_URL=postgres://… naming a server whose
 * user may create databases)
 */

const { values } = parseArgs({
  options: {
    plants: { type: 'string', default: '1000000' },
    writes: { type: 'string', default: '3000' },
    postgres: { type: 'boolean', default: false },
    // PostgreSQL: what "without" drops: every search index and the folding triggers (all), or the trigram
    // GIN index alone (trgm: what keeping it in the writes' transactions costs them).
    without: { type: 'string', default: 'all' },
  },
});
const PLANTS = Number(values.plants);
const WRITES = Number(values.writes);
const PG_URL = process.env.DATABASE_URL?.startsWith('postgres') ? process.env.DATABASE_URL : undefined;

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Writes `WRITES` new plants `concurrency` at a time; the wall time and the process's CPU (all threads) per write. */
async function writeCost(store: Store, firstId: number, concurrency: number): Promise<{ perSecond: number; cpuUs: number }> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < WRITES; i += concurrency) {
    await Promise.all(
      Array.from({ length: Math.min(concurrency, WRITES - i) }, (_, j) => {
        const id = firstId + i + j;
        return store.plants.put({ id, name: seedName(id), tag: 'tropical' });
      }),
    );
  }
  const used = process.cpuUsage(cpu);
  return { perSecond: WRITES / ((performance.now() - started) / 1000), cpuUs: (used.user + used.system) / WRITES };
}

/** With and without the search indexes (two copies of the store), alternately, twice each, one at a time and 64 at once. */
async function compareWrites(withSearch: () => Promise<Store>, withoutSearch: () => Promise<Store>, cpu: boolean): Promise<void> {
  let id = 10_000_000;
  for (const concurrency of [1, 64]) {
    for (let round = 0; round < 2; round++) {
      for (const indexed of [true, false]) {
        const store = await (indexed ? withSearch() : withoutSearch());
        const { perSecond, cpuUs } = await writeCost(store, id, concurrency);
        id += WRITES;
        await store.close();
        process.stdout.write(
          `  ${concurrency === 1 ? 'one at a time' : '64 at once   '}  ${indexed ? 'with search   ' : 'without search'}  ${perSecond.toFixed(0).padStart(6)} writes/s` +
            (cpu ? `  ${cpuUs.toFixed(0)} µs CPU per write (the service's process, its writer thread included)` : '') +
            '\n',
        );
      }
    }
  }
}

async function sqlite(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-search-costs-'));
  const path = join(dir, 'plants.db');
  try {
    const db = openConnection(path);
    db.exec('PRAGMA journal_mode = WAL');
    sqliteBefore(db, 'plant_search');
    const insert = prepare(db, 'INSERT INTO plants (id, name, tag) VALUES (?, ?, ?)');
    db.transaction(() => {
      for (let id = 1; id <= PLANTS; id++) insert.run(id, seedName(id), SEED_TAGS[id % 4]);
    })();
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    db.close();
    const before = statSync(path).size;
    const started = performance.now();
    const options = { synchronous: 'FULL', busyTimeoutMs: 5000 } as const;
    const migrated = SqliteStore.open(`file:${path}`, options);
    const took = performance.now() - started;
    await migrated.close();
    const check = openConnection(path);
    check.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    const sizes = prepare(
      check,
      "SELECT name, sum(pgsize) AS bytes FROM dbstat WHERE name LIKE 'plants%' GROUP BY name ORDER BY name",
    ).all() as Array<{ name: string; bytes: number }>;
    check.close();
    process.stdout.write(
      `SQLite, ${PLANTS.toLocaleString('en-US')} plants: migration plant_search took ${seconds(took)} (one transaction, at start); file ${mb(before)} -> ${mb(statSync(path).size)}\n`,
    );
    for (const { name, bytes } of sizes) process.stdout.write(`  ${name.padEnd(28)} ${mb(bytes)}\n`);
    // Without: a copy with the trigram index, its triggers and the two name indexes dropped (name_fold
    // stays: the writes fill it).
    const bare = join(dir, 'bare.db');
    copyFileSync(path, bare);
    const d = openConnection(bare);
    d.exec(`DROP TRIGGER IF EXISTS plants_search_insert; DROP TRIGGER IF EXISTS plants_search_update; DROP TRIGGER IF EXISTS plants_search_delete;
      DROP TABLE plants_search; DROP INDEX plants_name_id; DROP INDEX plants_tag_name_id; VACUUM`);
    d.close();
    const open = (file: string) => () => Promise.resolve(SqliteStore.open(`file:${file}`, options));
    await compareWrites(open(path), open(bare), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgres(): Promise<void> {
  const cleanups: Array<() => Promise<void> | void> = [];
  try {
    let admin = PG_URL;
    if (!admin) {
      const { TestPostgres } = await import('../test/store/postgres/pg-server.js');
      const server = await TestPostgres.start(((fn: () => Promise<void>) => cleanups.push(fn)) as never, {
        fsync: 'on',
        synchronous_commit: 'on',
        full_page_writes: 'on',
        shared_buffers: "'128MB'",
      });
      admin = server.url('postgres');
    }
    const name = `search_costs_${process.pid}`;
    const adminClient = new pg.Client({ connectionString: admin });
    await adminClient.connect();
    await adminClient.query(`CREATE DATABASE ${name}`);
    cleanups.push(async () => {
      await adminClient.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await adminClient.end();
    });
    const url = new URL(admin);
    url.pathname = `/${name}`;
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    cleanups.push(() => client.end());
    await postgresBefore(client, 'plant_search');
    await client.query(
      `INSERT INTO plants (id, name, tag) SELECT g, ${SEED_NAME_SQL}, (ARRAY['tropical','succulent','fern',NULL])[g % 4 + 1] FROM generate_series(1, $1::bigint) g`,
      [PLANTS, ...SEED_NAME_PARAMS],
    );
    await client.query('VACUUM ANALYZE plants');
    const size = async () => Number((await client.query<{ b: string }>("SELECT pg_total_relation_size('plants') AS b")).rows[0]!.b);
    const before = await size();
    // Another client writes throughout: its longest wait shows whether the migration held writes.
    const writer = new pg.Client({ connectionString: url.toString() });
    await writer.connect();
    let longest = 0;
    let writes = 0;
    let stop = false;
    const writing = (async () => {
      while (!stop) {
        const started = performance.now();
        await writer.query('INSERT INTO plants (id, name) VALUES ($1, $2)', [20_000_000 + writes++, 'Written meanwhile']);
        longest = Math.max(longest, performance.now() - started);
      }
    })();
    const started = performance.now();
    const store = await PostgresStore.open(url.toString(), { poolSize: 4, timeoutMs: 60_000 });
    const took = performance.now() - started;
    stop = true;
    await writing;
    await writer.end();
    await store.close();
    process.stdout.write(
      `PostgreSQL, ${PLANTS.toLocaleString('en-US')} plants: migration plant_search took ${seconds(took)}; another client wrote ${writes} plants meanwhile, the longest waiting ${longest.toFixed(0)} ms; plants with its indexes ${mb(before)} -> ${mb(await size())}\n`,
    );
    const { rows } = await client.query<{ name: string; b: string }>(
      "SELECT c.relname AS name, pg_relation_size(c.oid) AS b FROM pg_class c WHERE c.relname LIKE 'plants%' AND c.relkind IN ('r', 'i') ORDER BY 1",
    );
    for (const row of rows) process.stdout.write(`  ${row.name.padEnd(28)} ${mb(Number(row.b))}\n`);
    // Without: a copy of the database with the search indexes and the folding triggers dropped.
    await client.end();
    cleanups.pop();
    await adminClient.query(`CREATE DATABASE ${name}_bare TEMPLATE ${name}`);
    cleanups.push(() => adminClient.query(`DROP DATABASE IF EXISTS ${name}_bare WITH (FORCE)`).then(() => undefined));
    const bare = new URL(url);
    bare.pathname = `/${name}_bare`;
    const b = new pg.Client({ connectionString: bare.toString() });
    await b.connect();
    await b.query(
      values.without === 'trgm'
        ? 'DROP INDEX plants_name_fold_trgm'
        : `DROP TRIGGER plants_fold_name_insert ON plants; DROP TRIGGER plants_fold_name_update ON plants;
      DROP INDEX plants_name_id; DROP INDEX plants_tag_name_id; DROP INDEX plants_name_fold_trgm`,
    );
    await b.end();
    const open = (at: URL) => () => PostgresStore.open(at.toString(), { poolSize: 8, timeoutMs: 60_000 });
    await compareWrites(open(url), open(bare), false);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

await (values.postgres || PG_URL ? postgres() : sqlite());
