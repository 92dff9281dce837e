import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { backupSqlite } from '../src/store/sqlite/backup/backup.js';
import { seedSqlite } from './seed.js';
import { freePort, ROOT, SERVICE_JS, startServer } from './servers.js';

/**
 * What a backup costs a live store: the service serves a store of PLANTS plants (1,000,000 by default)
 * while CLIENTS clients (8) replace random plants as fast as it answers (PUT /plants/{id}, each a durable
 * commit, group-committed), and backups are taken one after another, each in a process of its own:
 *
 *   - the service's backup (backupSqlite: VACUUM INTO, integrity_check, fsync, rename: what `plant-store
 *     backup` and the schedule run), and VACUUM INTO alone;
 *   - SQLite's online backup API (better-sqlite3's db.backup()), 100 pages a step (its default) and all
 *     pages in one step.
 *
 * For each: how long it took, whether it finished (the online API starts over whenever another connection
 * writes), the writes answered meanwhile, and their latency: the median, the 99th percentile and the
 * longest, against the same load with no backup (the longest write is the longest pause a writer saw).
 *
 *   npm run bench:backup                        # 1M plants, 8 clients
 *   npm run bench:backup -- --plants=200000 --clients=16
 */

const args = Object.fromEntries(process.argv.slice(2).map((arg) => arg.replace(/^--/, '').split('=') as [string, string]));
const PLANTS = Number(args.plants ?? 1_000_000);
const CLIENTS = Number(args.clients ?? 8);
const TOKEN = 'bench-backup-token-0123456789abcdefgh';
/** The load with no backup, measured first and between backups. */
const QUIET_MS = 3000;
/** The online API with its default step is given up after this: under writes it may never finish. */
const API_LIMIT_MS = 60_000;
const COPY_JS = `${ROOT}dist/bench/backup-copy.js`;

interface Write {
  startedAt: number;
  ms: number;
}

/** Writers at full speed until stopped; every answered write, when it began and how long it took. */
function writeLoad(port: number) {
  const writes: Write[] = [];
  let failures = 0;
  let stopped = false;
  const client = async () => {
    while (!stopped) {
      const id = 1 + Math.floor(Math.random() * PLANTS);
      const startedAt = performance.now();
      const response = await fetch(`http://127.0.0.1:${port}/plants/${id}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Plant ${id}, replaced`, tag: 'fern' }),
      });
      await response.arrayBuffer();
      if (response.status === 200 || response.status === 201) writes.push({ startedAt, ms: performance.now() - startedAt });
      else failures++;
    }
  };
  const running = Array.from({ length: CLIENTS }, client);
  return {
    writes,
    failures: () => failures,
    stop: async () => {
      stopped = true;
      await Promise.all(running);
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface Row {
  what: string;
  ms: number;
  finished: string;
  writes: number;
  p50: number;
  p99: number;
  max: number;
  walMb: number;
}

/** The writes that were in flight at any moment of [from, to], as a row of the table. */
function row(what: string, writes: Write[], from: number, to: number, result: { ms: number; finished: string }, walMb: number): Row {
  const during = writes
    .filter((write) => write.startedAt <= to && write.startedAt + write.ms >= from)
    .map((write) => write.ms)
    .sort((a, b) => a - b);
  return {
    what,
    ms: result.ms,
    finished: result.finished,
    writes: during.length,
    p50: percentile(during, 50),
    p99: percentile(during, 99),
    max: during.at(-1) ?? NaN,
    walMb,
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-bench-backup-'));
  try {
    const path = join(dir, 'plants.db');
    process.stderr.write(`seeding ${PLANTS} plants…\n`);
    await seedSqlite(path, PLANTS);
    process.stderr.write(`store: ${(statSync(path).size / 2 ** 20).toFixed(1)} MiB\n`);
    const port = await freePort();
    const server = await startServer({
      name: 'service',
      args: [SERVICE_JS],
      env: { DATABASE_URL: `file:${path}`, PLANT_STORE_TOKENS: TOKEN, PORT: String(port), LOG_LEVEL: 'warn' },
      port,
      readyPath: '/healthz',
      logFile: join(dir, 'service.log'),
    });
    const load = writeLoad(port);
    const walMb = () => (statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0) / 2 ** 20;
    const rows: Row[] = [];
    let n = 0;
    const measure = async (what: string, take: () => Promise<{ ms: number; finished: string }>) => {
      await sleep(QUIET_MS);
      const quietFrom = performance.now() - QUIET_MS;
      rows.push(row('(no backup)', load.writes, quietFrom, performance.now(), { ms: NaN, finished: '' }, walMb()));
      process.stderr.write(`${what}…\n`);
      const from = performance.now();
      const result = await take();
      rows.push(row(what, load.writes, from, performance.now(), result, walMb()));
    };
    const copy = async (...copyArgs: string[]) => {
      const { stdout } = await promisify(execFile)(process.execPath, [
        COPY_JS,
        copyArgs[0]!,
        path,
        join(dir, `copy-${++n}.db`),
        ...copyArgs.slice(1),
      ]);
      const result = JSON.parse(stdout) as { ms: number; finished: boolean; restarts?: number };
      const restarts = result.restarts === undefined ? '' : `, ${result.restarts} restarts`;
      return { ms: result.ms, finished: `${result.finished ? 'yes' : `no, given up`}${restarts}` };
    };
    await measure("the service's backup (VACUUM INTO, integrity_check, fsync)", async () => {
      const result = await backupSqlite(path, join(dir, `copy-${++n}.db`));
      return { ms: result.seconds * 1000, finished: 'yes' };
    });
    await measure('VACUUM INTO alone', () => copy('vacuum'));
    await measure('online backup API, 100 pages a step', () => copy('api', '100', String(API_LIMIT_MS)));
    await measure('online backup API, all pages in one step', () => copy('api', '-1', String(API_LIMIT_MS)));
    await sleep(QUIET_MS);
    rows.push(row('(no backup)', load.writes, performance.now() - QUIET_MS, performance.now(), { ms: NaN, finished: '' }, walMb()));
    await load.stop();
    await server.stop();

    const fixed = (value: number, digits = 0) => (Number.isNaN(value) ? '' : value.toFixed(digits));
    process.stdout.write(
      `\n${PLANTS} plants (${(statSync(path).size / 2 ** 20).toFixed(0)} MiB), ${CLIENTS} writers, ${load.failures()} failed writes\n\n`,
    );
    process.stdout.write(
      '| | backup ms | finished | writes meanwhile | write p50 ms | p99 ms | longest ms | -wal MiB after |\n|---|---|---|---|---|---|---|---|\n',
    );
    for (const r of rows) {
      process.stdout.write(
        `| ${r.what} | ${fixed(r.ms)} | ${r.finished} | ${r.writes} | ${fixed(r.p50, 1)} | ${fixed(r.p99, 1)} | ${fixed(r.max, 1)} | ${fixed(r.walMb, 1)} |\n`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
