import { performance } from 'node:perf_hooks';
import pg from 'pg';
import postgres from 'postgres';
import { postgresStores } from './stores.js';

/**
 * pg (node-postgres, the service's driver) against postgres.js (pipelining, prepared statements) on the
 * service's PostgreSQL workload, with nothing else in the process: no HTTP, no service. Each workload runs
 * a closed loop of callers on a pool of 10 connections (PG_POOL_SIZE's default), 1 s warm-up then 4 s
 * measured, and reports operations per second and this process's CPU per operation. The drivers take
 * turns (pg, postgres.js, pg, postgres.js) against the same database.
 *
 *   npm run bench:drivers                  # a throwaway local cluster (fsync on), 100k plants
 *   npm run bench:drivers -- <DATABASE_URL> # … or a server you name (an empty database: it makes a table)
 *
 * Workloads: `read` one SELECT by id per call, 64 callers; `read×64` the gathered read (one SELECT of 64
 * ids by = ANY, what the service sends under load), 2 callers; `write` one durable single-row upsert per
 * call, 64 callers (what a driver gives without the service's group commit: postgres.js pipelines them,
 * pg queues them per connection); `write×32` the group commit's shape, a 32-row upsert from arrays, 2
 * callers (2 batches in flight, as the service's batcher).
 */

const POOL = 10;
const PLANTS = 100_000;
const WARMUP_MS = 1000;
const MEASURE_MS = 4000;

const READ = 'SELECT id::text AS id, name, tag, version::text AS version FROM plants WHERE id = $1::bigint';
const READ_MANY = 'SELECT id::text AS id, name, tag, version::text AS version FROM plants WHERE id = ANY($1::bigint[])';
const WRITE = `INSERT INTO plants (id, name, tag, version) VALUES ($1::bigint, $2, $3, nextval('plant_version'))
  ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag, version = EXCLUDED.version RETURNING version::text AS version`;
const WRITE_MANY = `INSERT INTO plants (id, name, tag, version)
  SELECT id, name, tag, nextval('plant_version') FROM unnest($1::bigint[], $2::text[], $3::text[]) AS i (id, name, tag) ORDER BY id
  ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag, version = EXCLUDED.version RETURNING version::text AS version`;

type Run = (text: string, params: unknown[]) => Promise<unknown>;

interface Driver {
  name: string;
  run: Run;
  end(): Promise<void>;
}

function pgDriver(url: string, named: boolean): Driver {
  const pool = new pg.Pool({ connectionString: url, max: POOL });
  const names = new Map<string, string>();
  return {
    name: named ? 'pg, named statements' : 'pg',
    run: (text, values) => {
      if (!named) return pool.query(text, values);
      let name = names.get(text);
      if (name === undefined) names.set(text, (name = `s${names.size}`));
      return pool.query({ name, text, values });
    },
    end: () => pool.end(),
  };
}

function postgresJsDriver(url: string): Driver {
  const sql = postgres(url, { max: POOL, onnotice: () => undefined });
  return {
    name: 'postgres.js',
    // unsafe(): the same SQL text as pg gets; prepared (named) statements and pipelining, postgres.js's defaults.
    run: (text, params) => sql.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: true }),
    end: () => sql.end(),
  };
}

interface Workload {
  name: string;
  callers: number;
  /** Rows each call reads or writes. */
  rows: number;
  call: (run: Run) => Promise<unknown>;
}

let nextId = PLANTS + 1;
const randomId = () => 1 + Math.floor(Math.random() * PLANTS);
const WORKLOADS: Workload[] = [
  { name: 'read', callers: 64, rows: 1, call: (run) => run(READ, [String(randomId())]) },
  {
    name: 'read×64',
    callers: 2,
    rows: 64,
    call: (run) => run(READ_MANY, [Array.from({ length: 64 }, () => String(randomId()))]),
  },
  { name: 'write', callers: 64, rows: 1, call: (run) => run(WRITE, [String(nextId++), 'Monstera', 'green']) },
  {
    name: 'write×32',
    callers: 2,
    rows: 32,
    call: (run) => {
      const ids = Array.from({ length: 32 }, () => String(nextId++));
      return run(WRITE_MANY, [ids, ids.map((id) => `Monstera ${id}`), ids.map(() => 'green')]);
    },
  },
];

/** Runs `workload` for `ms`, returning rows done and this process's CPU seconds. */
async function drive(driver: Driver, workload: Workload, ms: number): Promise<{ rows: number; seconds: number; cpu: number }> {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const until = started + ms;
  let calls = 0;
  await Promise.all(
    Array.from({ length: workload.callers }, async () => {
      while (performance.now() < until) {
        await workload.call(driver.run);
        calls++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return { rows: calls * workload.rows, seconds, cpu: (cpu.user + cpu.system) / 1e6 };
}

async function main(): Promise<void> {
  const store = await postgresStores(process.argv[2]);
  try {
    const url = await store.url(PLANTS);
    const makers = [() => pgDriver(url, false), () => pgDriver(url, true), () => postgresJsDriver(url)];
    const results = new Map<string, { perSecond: number[]; cpuUs: number[] }>();
    for (const workload of WORKLOADS) {
      for (let round = 0; round < 2; round++) {
        for (const make of makers) {
          const driver = make();
          try {
            await drive(driver, workload, WARMUP_MS);
            const { rows, seconds, cpu } = await drive(driver, workload, MEASURE_MS);
            const key = `${workload.name}\t${driver.name}`;
            const entry = results.get(key) ?? { perSecond: [], cpuUs: [] };
            entry.perSecond.push(rows / seconds);
            entry.cpuUs.push((cpu / rows) * 1e6);
            results.set(key, entry);
            process.stdout.write(
              `  ${workload.name.padEnd(9)} ${driver.name.padEnd(22)} ${Math.round(rows / seconds)
                .toString()
                .padStart(7)} rows/s  ${((cpu / rows) * 1e6).toFixed(1)} µs CPU/row\n`,
            );
          } finally {
            await driver.end();
          }
        }
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    process.stdout.write(`\n| workload | driver | rows/s (each run) | driver process CPU µs/row |\n|---|---|---|---:|\n`);
    for (const [key, { perSecond, cpuUs }] of results) {
      const [workload, driver] = key.split('\t');
      process.stdout.write(
        `| ${workload} | ${driver} | ${Math.round(mean(perSecond)).toLocaleString('en-US')} (${perSecond.map((x) => Math.round(x).toLocaleString('en-US')).join(', ')}) | ${mean(cpuUs).toFixed(1)} |\n`,
      );
    }
  } finally {
    await store.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:drivers: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
