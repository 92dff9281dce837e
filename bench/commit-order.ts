import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { ALONE, type FeedContext } from '../src/store/postgres/feed.js';
import type { Query } from '../src/store/postgres/query.js';
import { applyPlainPuts } from '../src/store/postgres/plant-writes.js';
import { postgresStores } from './stores.js';

/**
 * What the change feed's commit ordering costs on PostgreSQL (src/store/postgres/feed.ts): the service's
 * own upsert statement (applyPlainPuts: plants, webhook outbox, events) run as it runs it, ending by taking a
 * commit number under the advisory lock held until the commit (`ordered`), against the same statement
 * without that last step (`unordered`: the events are inserted, under their key, but numbered by nobody),
 * taking turns on one database, 1 s warm-up then 4 s measured each. Nothing else is in the way: no HTTP,
 * no group commit, so the difference is the lock's alone.
 *
 *   npm run bench:commit-order                  # a throwaway local cluster (fsync on, synchronous_commit on)
 *   npm run bench:commit-order -- <DATABASE_URL> # … or a server you name (a scratch database is made on it)
 *
 * Workloads: `batches` 8 callers each committing 32-row statements (the group commit's shape: two batches in
 * flight per instance, four instances); `singles` 64 callers each committing one row (the worst case: many
 * small concurrent commits, which PostgreSQL would otherwise flush together).
 */

const WARMUP_MS = 1000;
const MEASURE_MS = 4000;
const ROUNDS = 2;

const UNORDERED: FeedContext = { key: null, base: 0, commits: false };

interface Workload {
  name: string;
  callers: number;
  rows: number;
}

const WORKLOADS: Workload[] = [
  { name: 'batches', callers: 8, rows: 32 },
  { name: 'singles', callers: 64, rows: 1 },
];

interface Result {
  rowsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

let nextId = 1_000_000;

async function drive(query: Query, workload: Workload, feed: FeedContext, ms: number): Promise<Result> {
  const latencies: number[] = [];
  const started = performance.now();
  const until = started + ms;
  await Promise.all(
    Array.from({ length: workload.callers }, async () => {
      while (performance.now() < until) {
        const plants = Array.from({ length: workload.rows }, () => ({ id: nextId++, name: 'Monstera', tag: 'green' }));
        const sent = performance.now();
        await applyPlainPuts(query, plants, feed);
        latencies.push(performance.now() - sent);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((latencies.length * p) / 100))]!;
  return { rowsPerSecond: (latencies.length * workload.rows) / seconds, p50Ms: at(50), p99Ms: at(99) };
}

async function main(): Promise<void> {
  const store = await postgresStores(process.argv[2]);
  try {
    // Seeded with one plant: the service's migrations have made the schema.
    const url = await store.url(1);
    const pool = new pg.Pool({ connectionString: url, max: 64 });
    const query: Query = (text, values) => pool.query(text, values);
    const variants: Array<[string, FeedContext]> = [
      ['ordered', ALONE],
      ['unordered', UNORDERED],
    ];
    const results = new Map<string, Result[]>();
    try {
      for (const workload of WORKLOADS) {
        for (let round = 0; round < ROUNDS; round++) {
          for (const [name, feed] of variants) {
            await drive(query, workload, feed, WARMUP_MS);
            const result = await drive(query, workload, feed, MEASURE_MS);
            const key = `${workload.name} (${workload.callers} × ${workload.rows} rows)\t${name}`;
            results.set(key, [...(results.get(key) ?? []), result]);
            process.stdout.write(
              `  ${workload.name.padEnd(8)} ${name.padEnd(10)} ${Math.round(result.rowsPerSecond).toString().padStart(7)} rows/s  ` +
                `p50 ${result.p50Ms.toFixed(1)} ms  p99 ${result.p99Ms.toFixed(1)} ms\n`,
            );
          }
        }
      }
    } finally {
      await pool.end();
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    process.stdout.write('\n| workload | commits | rows/s (each run) | ordered / unordered | p50 ms | p99 ms |\n|---|---|---|---:|---:|---:|\n');
    for (const [key, runs] of results) {
      const [workload, variant] = key.split('\t') as [string, string];
      const rate = mean(runs.map((r) => r.rowsPerSecond));
      const unordered = mean((results.get(`${workload}\tunordered`) ?? runs).map((r) => r.rowsPerSecond));
      process.stdout.write(
        `| ${workload} | ${variant} | ${Math.round(rate).toLocaleString('en-US')} (${runs.map((r) => Math.round(r.rowsPerSecond).toLocaleString('en-US')).join(', ')}) | ` +
          `${variant === 'ordered' ? (rate / unordered).toFixed(2) : ''} | ${mean(runs.map((r) => r.p50Ms)).toFixed(1)} | ${mean(runs.map((r) => r.p99Ms)).toFixed(1)} |\n`,
      );
    }
  } finally {
    await store.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:commit-order: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
