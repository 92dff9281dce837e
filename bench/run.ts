import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import type { LoadOptions, LoadResult } from './load.js';
import {
  feedTable,
  lagTable,
  machine,
  prototypeTable,
  summarize,
  table,
  underWritesTable,
  webhookTable,
  writeResults,
  type Measurement,
} from './report.js';
import { WRITE_ID_MIN } from './requests.js';
import { deliveryCpuTable, targetsTable, typingTable } from './targets.js';
import { sampleSearchLag } from './search-lag.js';
import { SCENARIOS, type Scenario } from './scenarios.js';
import {
  BASELINE_JS,
  EQUAL_WORK_JS,
  freePort,
  HAS_TASKSET,
  LOAD_JS,
  pinned,
  PROTOTYPE_JS,
  READ_PROTOTYPE_JS,
  ROOT,
  SERVICE_JS,
  startServer,
  type Running,
} from './servers.js';
import { postgresStores, sqliteStores, type BenchStore } from './stores.js';
import { openStreams } from './streams.js';
import { subscribe } from './subscriber.js';
import { startOtlpSink, type OtlpSink } from './otlp-sink.js';
import type { ProfiledRun } from './stages.js';
import { importBare, importOverHttp, importTable, IMPORT_ROWS, type ImportMeasurement } from './import.js';
import { idleTable, measureIdle, type IdleMeasurement } from './idle.js';

/**
 * npm run bench [-- --quick] [--peers] [--postgres] [--only=post64,get100k] [--runs=N] [--cpu-prof] [--sqlite-synchronous=NORMAL]
 *   [--compare=../other-checkout/dist/src/server.js]
 * (--cpu-prof: the service writes V8 CPU profiles to $TMPDIR/plant-store-profiles/<run>/; summarize one with
 * node dist/bench/profile.js <file.cpuprofile>, or the whole run as µs per request by stage with
 * node dist/bench/profile.js --stages <that folder> (bench/stages.ts).)
 *
 * Runs every scenario against the baseline and the service alternately (at least twice each), the
 * servers pinned to CPU 0 and the load generator to CPU 1, and writes the table to bench/RESULTS.md.
 * DATABASE_URL=postgres://… or --postgres runs the service on PostgreSQL instead of SQLite.
 */

const { values: options } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    peers: { type: 'boolean', default: false },
    postgres: { type: 'boolean', default: false },
    'cpu-prof': { type: 'boolean', default: false },
    runs: { type: 'string', default: '2' },
    only: { type: 'string' },
    'sqlite-synchronous': { type: 'string' },
    /** Another build of the service (its dist/src/server.js) measured in the same run, as "compared": before/after a change. */
    compare: { type: 'string' },
  },
});
const QUICK = options.quick;
const PEERS = options.peers;
const CPU_PROF = options['cpu-prof'];
/** One folder per run: each service run's profiles (one per thread) beside what the run measured (run-<pid>.json, bench/stages.ts). */
const PROFILE_DIR = join(tmpdir(), 'plant-store-profiles', new Date().toISOString().replace(/[:.]/g, '-'));
const RUNS = Number(options.runs);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`--runs must be a whole number from 1, got ${options.runs}`);
const ONLY = options.only?.split(',');
/** For comparison only (how much the fsync costs): --sqlite-synchronous=NORMAL. The default, FULL, is what the targets are about. */
const SYNCHRONOUS = options['sqlite-synchronous'];
const WARMUP_MS = QUICK ? 500 : 1000;
const DURATION_MS = QUICK ? 2000 : 5000;
const TOKEN = 'bench-token-0123456789abcdef0123456789';
const PG_URL = process.env.DATABASE_URL?.startsWith('postgres') ? process.env.DATABASE_URL : undefined;
const POSTGRES = PG_URL !== undefined || options.postgres;

const work = mkdtempSync(join(tmpdir(), 'plant-store-bench-'));
const HAS_EQUAL_WORK = existsSync(EQUAL_WORK_JS);
if (!HAS_EQUAL_WORK) process.stderr.write(`${EQUAL_WORK_JS} not found: the equal-work prototype is left out\n`);
const logFile = join(work, 'servers.log');
let runCounter = 0;

function runLoadProcess(options: LoadOptions): Promise<LoadResult> {
  const [command, commandArgs] = pinned(1, [LOAD_JS, JSON.stringify(options)]);
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.once('close', (code) => {
      if (code !== 0) return reject(new Error(`load generator exited with ${code}`));
      resolve(JSON.parse(out) as LoadResult);
    });
  });
}

type Target = 'baseline' | 'prototype' | 'equal-work' | 'read prototype' | 'service' | 'compared' | 'json-server 0.17';

/** The tracing scenarios' collector, started with the first of them. */
let otlpSink: OtlpSink | undefined;

async function start(
  target: Target,
  scenario: Pick<Scenario, 'seeded' | 'env' | 'otlp' | 'cpus'>,
  store: BenchStore,
): Promise<Running & { databaseUrl?: string }> {
  const port = await freePort();
  const cpus = scenario.cpus;
  if (target === 'baseline') {
    return startServer({
      name: 'baseline',
      args: [BASELINE_JS],
      env: { PORT: String(port), BENCH_TOKEN: TOKEN },
      port,
      readyPath: '/healthz',
      logFile,
      cpus,
    });
  }
  if (target === 'prototype') {
    return startServer({
      name: 'prototype',
      args: [PROTOTYPE_JS],
      env: { PORT: String(port), BENCH_TOKEN: TOKEN, DATABASE_URL: await store.url(0) },
      port,
      readyPath: '/healthz',
      logFile,
      cpus,
    });
  }
  if (target === 'equal-work') {
    // Its store is a fresh SQLite file, as the service's (a path, not a URL); it has no route for a probe.
    return startServer({
      name: 'equal-work',
      args: [EQUAL_WORK_JS],
      env: { PORT: String(port), TOKEN, DB: (await store.url(0)).replace(/^file:/, '') },
      port,
      readyPath: '/',
      anyAnswer: true,
      logFile,
      cpus,
    });
  }
  if (target === 'read prototype') {
    return startServer({
      name: 'read prototype',
      args: [READ_PROTOTYPE_JS],
      env: { PORT: String(port), BENCH_TOKEN: TOKEN, DATABASE_URL: await store.url(scenario.seeded) },
      port,
      readyPath: '/healthz',
      logFile,
      cpus,
    });
  }
  if (target === 'service' || target === 'compared') {
    const profileArgs = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
    const databaseUrl = await store.url(scenario.seeded);
    const running = await startServer({
      name: target,
      args: [...profileArgs, target === 'compared' ? options.compare! : SERVICE_JS],
      env: {
        NODE_ENV: 'production',
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: databaseUrl,
        PLANT_STORE_TOKENS: TOKEN,
        // The webhook scenario's subscriber listens on loopback.
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        ...(SYNCHRONOUS ? { SQLITE_SYNCHRONOUS: SYNCHRONOUS } : {}),
        ...(process.env.LOG_LEVEL ? { LOG_LEVEL: process.env.LOG_LEVEL } : {}),
        // PostgreSQL's pools, as the bench was started with (both servers get the same): to measure how reads fare with fewer connections.
        ...Object.fromEntries(['PG_POOL_SIZE', 'PG_READ_POOL_SIZE'].flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : []))),
        ...(scenario.otlp ? { OTEL_EXPORTER_OTLP_ENDPOINT: (otlpSink ??= await startOtlpSink()).endpoint } : {}),
        ...scenario.env,
      },
      port,
      readyPath: '/readyz',
      logFile,
      cpus,
    });
    return { ...running, databaseUrl };
  }
  const dir = join(work, `json-server-${++runCounter}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'db.json'), '{"plants": []}\n');
  return startServer({
    name: 'json-server',
    args: [await jsonServerBin(), '--port', String(port), '--host', '127.0.0.1', '--quiet', join(dir, 'db.json')],
    env: {},
    port,
    readyPath: '/plants',
    logFile,
  });
}

/** json-server is not a dependency of the project: it is installed on first use into a cache outside the repository. */
async function jsonServerBin(): Promise<string> {
  const dir = join(tmpdir(), 'plant-store-bench-peers');
  const bin = join(dir, 'node_modules', 'json-server', 'lib', 'cli', 'bin.js');
  if (!existsSync(bin)) {
    process.stderr.write(`installing json-server@0.17 into ${dir} (once)\n`);
    mkdirSync(dir, { recursive: true });
    await promisify(execFile)('npm', ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', 'json-server@0.17'], { timeout: 300_000 });
  }
  return bin;
}

async function measure(target: Target, scenario: Scenario, store: BenchStore, maxRate?: number): Promise<Measurement> {
  const server = await start(target, scenario, store);
  try {
    const idBase = WRITE_ID_MIN + ++runCounter * 10_000_000;
    const subscriber = scenario.subscriber && target !== 'baseline' ? await subscribe(server.port, TOKEN) : undefined;
    const streams = scenario.streams && target !== 'baseline' ? await openStreams(server.port, TOKEN, scenario.streams) : undefined;
    // Writes on SQLite: how far the search index, which follows them, is behind while they run.
    const searchLag = server.databaseUrl && scenario.workload(0).kind === 'post' ? sampleSearchLag(server.databaseUrl) : undefined;
    const result = await runLoadProcess({
      port: server.port,
      connections: scenario.connections,
      warmupMs: WARMUP_MS,
      durationMs: DURATION_MS,
      token: TOKEN,
      workload: scenario.workload(idBase),
      serverPid: server.pid,
      ...(maxRate === undefined || scenario.rateOf === undefined ? {} : { rate: maxRate * scenario.rateOf.share }),
      ...(scenario.rate === undefined ? {} : { rate: scenario.rate }),
      ...(scenario.alongside === undefined
        ? {}
        : { alongside: { connections: scenario.alongside.connections, workload: scenario.alongside.workload(idBase) } }),
    });
    const lag = await searchLag?.finish();
    if (lag) {
      process.stdout.write(
        `  ${target}: search index behind the writes p99 ${lag.p99Ms} ms, max ${lag.maxMs} ms; caught up ${lag.drainMs} ms after the load\n`,
      );
    }
    const webhooks = await subscriber?.finish();
    const feed = await streams?.finish();
    const peak = server.peakRssMb();
    if (CPU_PROF && (target === 'service' || target === 'compared')) {
      const run: ProfiledRun = { pid: server.pid, scenario: scenario.key, target, windowUs: result.windowUs, requests: result.requests };
      writeFileSync(join(PROFILE_DIR, `run-${server.pid}.json`), JSON.stringify(run));
    }
    return {
      ...result,
      scenario: scenario.key,
      target,
      readyMs: server.readyMs,
      ...(peak === undefined ? {} : { peakRssMb: peak }),
      ...(maxRate === undefined ? {} : { maxRate }),
      ...(webhooks === undefined ? {} : { webhooks }),
      ...(feed === undefined ? {} : { feed }),
    };
  } finally {
    await server.stop();
    // What the service exported, its last spans (exported as it stops) included.
    const traces = scenario.otlp && target !== 'baseline' ? otlpSink?.take() : undefined;
    if (traces) process.stdout.write(`  ${target}: ${traces.exports} OTLP exports, ${(traces.bytes / 1e6).toFixed(1)} MB of spans\n`);
  }
}

/** The idle-memory measurement (bench/idle.ts). */
const IDLE_KEY = 'idle';

/** The import scenario (bench/import.ts): the bare driver and the service alternately, each into a fresh store. */
const IMPORT_KEY = 'import1m';
const IMPORT_REFERENCE_JS = join(ROOT, 'dist', 'bench', 'import-reference.js');

async function importScenario(store: BenchStore): Promise<ImportMeasurement[]> {
  const rows = QUICK ? IMPORT_ROWS / 5 : IMPORT_ROWS;
  const measurements: ImportMeasurement[] = [];
  const show = (m: ImportMeasurement) =>
    process.stdout.write(
      `  ${m.target.padEnd(16)} ${Math.round(m.rows / m.seconds)
        .toString()
        .padStart(7)} plants/s  ${m.seconds.toFixed(2)} s  CPU ${m.cpuSeconds?.toFixed(1) ?? '?'} s  RSS ${m.peakRssMb?.toFixed(0) ?? '?'} MB\n`,
    );
  for (let run = 0; run < Math.max(2, RUNS); run++) {
    const bare = await importBare(IMPORT_REFERENCE_JS, await store.url(0), rows);
    measurements.push(bare);
    show(bare);
    for (const target of options.compare ? (['service', 'compared'] as const) : (['service'] as const)) {
      const server = await start(target, { seeded: 0 }, store);
      try {
        const result = await importOverHttp(server.port, TOKEN, rows, server.pid);
        const m: ImportMeasurement = { target, ...result, peakRssMb: server.peakRssMb() };
        measurements.push(m);
        show(m);
      } finally {
        await server.stop();
      }
    }
  }
  return measurements;
}

/** Server CPU as a share of a core and per request, its main thread's part beside. */
function serverCpu(m: Measurement): string {
  if (m.serverCpu === undefined) return '?';
  const perRequest = (share: number) => ((share / m.reqPerSec) * 1e6).toFixed(0);
  return `${(m.serverCpu * 100).toFixed(0)}% (${perRequest(m.serverCpu)} µs/req${m.serverMainCpu === undefined ? '' : `, main thread ${perRequest(m.serverMainCpu)}`})`;
}

function line(m: Measurement): string {
  return (
    `  ${m.target.padEnd(16)} ${m.reqPerSec.toFixed(0).padStart(7)} req/s  p50 ${m.p50Ms.toFixed(2)} ms  p99 ${m.p99Ms.toFixed(2)} ms  ` +
    `server CPU ${serverCpu(m)}  client CPU ${(m.clientCpu * 100).toFixed(0)}%  ` +
    `RSS ${m.peakRssMb?.toFixed(0) ?? '?'} MB  ready ${m.readyMs.toFixed(0)} ms  errors ${m.errors}  non-2xx ${m.non2xx}` +
    (m.firstNon2xx ? ` (first ${m.firstNon2xx})` : '') +
    (m.paced
      ? `\n${' '.repeat(19)}open loop: ${m.paced.rate.toFixed(0)} req/s asked${m.maxRate === undefined ? '' : ` (a share of ${m.maxRate.toFixed(0)})`}, ${m.paced.acknowledged} acknowledged in all, backlog at most ${m.paced.maxBacklog}`
      : '') +
    (m.alongside
      ? `\n${' '.repeat(19)}alongside: ${m.alongside.connections} connections answered ${m.alongside.reqPerSec.toFixed(0)} req/s, p50 ${m.alongside.p50Ms.toFixed(2)} ms p99 ${m.alongside.p99Ms.toFixed(2)} ms, errors ${m.alongside.errors}, non-2xx ${m.alongside.non2xx}`
      : '') +
    (m.webhooks
      ? `\n${' '.repeat(19)}webhooks: ${m.webhooks.delivered} delivered (${m.webhooks.deliveredDuringLoad} during the load), lag p50 ${m.webhooks.lagP50Ms.toFixed(0)} ms p99 ${m.webhooks.lagP99Ms.toFixed(0)} ms, drained ${m.webhooks.drainMs} ms after the load`
      : '') +
    (m.feed
      ? `\n${' '.repeat(19)}event streams: ${m.feed.streams}, ${m.feed.eventsMin}–${m.feed.eventsMax} events each, lag p50 ${m.feed.lagP50Ms} ms p99 ${m.feed.lagP99Ms} ms, drained ${m.feed.drainMs} ms after the load, readers' CPU ${(m.feed.readerCpu * 100).toFixed(0)}%`
      : '')
  );
}

/**
 * The maximum rate an open-loop scenario takes a share of, for one server: the mean of its runs of that
 * scenario in this bench run, or one run of it measured now (printed, not tabled) when it was not part of it.
 */
async function maximumRate(scenario: Scenario, target: Target, store: BenchStore, measurements: Measurement[]): Promise<number> {
  const key = scenario.rateOf!.scenario;
  const runs = measurements.filter((m) => m.scenario === key && m.target === target);
  if (runs.length > 0) return runs.reduce((sum, m) => sum + m.reqPerSec, 0) / runs.length;
  const of = SCENARIOS.find((s) => s.key === key);
  if (!of) throw new Error(`${scenario.key}: no scenario ${key} to take the maximum rate from`);
  const m = await measure(target, of, store);
  process.stdout.write(`${line(m)}  (${key}: the maximum rate)\n`);
  return m.reqPerSec;
}

async function main(): Promise<void> {
  if (!HAS_TASKSET) process.stderr.write('taskset not found: servers and load generator are NOT pinned to separate CPUs\n');
  if (CPU_PROF) {
    mkdirSync(PROFILE_DIR, { recursive: true });
    process.stdout.write(`CPU profiles of the service in ${PROFILE_DIR} (node dist/bench/profile.js --stages ${PROFILE_DIR})\n`);
  }
  const store = await (POSTGRES ? postgresStores(PG_URL) : Promise.resolve(sqliteStores(work))).catch((error: unknown) => {
    rmSync(work, { recursive: true, force: true });
    throw error;
  });
  const scenarios = SCENARIOS.filter((s) => !ONLY || ONLY.includes(s.key));
  const measurements: Measurement[] = [];
  let imports: ImportMeasurement[] = [];
  const idle: IdleMeasurement[] = [];
  const started = Date.now();
  try {
    if (!ONLY || ONLY.includes(IDLE_KEY)) {
      process.stdout.write(`Idle memory after start (${store.label})\n`);
      for (let run = 0; run < Math.max(2, RUNS); run++) {
        idle.push(await measureIdle(() => start('service', { seeded: 0 }, store), QUICK ? 15 : 60));
        process.stdout.write(
          `  service: ${idle.at(-1)!.afterStartMb.toFixed(0)} MB 5 s after ready, settled at ${idle.at(-1)!.settledMb.toFixed(0)} MB\n`,
        );
      }
    }
    for (const scenario of scenarios) {
      process.stdout.write(`${scenario.title} (${store.label})\n`);
      if (scenario.seeded > 0) await store.url(scenario.seeded);
      const targets: Target[] = [
        ...(scenario.rateOf || scenario.rate ? [] : (['baseline'] as const)),
        ...(scenario.prototype ? (['prototype'] as const) : []),
        // better-sqlite3 only, and only where the shared anchors are beside the repository.
        ...(scenario.equalWork && !POSTGRES && HAS_EQUAL_WORK ? (['equal-work'] as const) : []),
        // better-sqlite3 only: on PostgreSQL the reads are measured against the baseline alone.
        ...(scenario.readPrototype && !POSTGRES ? (['read prototype'] as const) : []),
        'service',
        // A seeded store is made by this build's migrations, which an earlier build may not know (it refuses a
        // newer schema): the compared build runs where each run has a fresh store, unless told it is the same.
        ...(options.compare && (scenario.seeded === 0 || process.env.BENCH_COMPARE_SEEDED === '1') ? (['compared'] as const) : []),
        ...(PEERS && scenario.peers ? (['json-server 0.17'] as const) : []),
      ];
      const maxRates = new Map<Target, number>();
      for (let run = 0; run < Math.max(2, RUNS); run++) {
        for (const target of targets) {
          if (scenario.rateOf && !maxRates.has(target)) maxRates.set(target, await maximumRate(scenario, target, store, measurements));
          const m = await measure(target, scenario, store, maxRates.get(target));
          measurements.push(m);
          process.stdout.write(`${line(m)}\n`);
        }
      }
    }
    if (!ONLY || ONLY.includes(IMPORT_KEY)) {
      process.stdout.write(
        `Import of ${(QUICK ? IMPORT_ROWS / 5 : IMPORT_ROWS).toLocaleString('en-US')} plants, NDJSON over HTTP, into an empty store (${store.label})\n`,
      );
      imports = await importScenario(store);
    }
  } finally {
    await store.close();
    await otlpSink?.close();
    rmSync(work, { recursive: true, force: true });
  }

  const rows = summarize(measurements, new Map(scenarios.map((s) => [s.key, s.title])));
  const hooks = webhookTable(measurements, 'post64hook', 'post64');
  const lag = lagTable(measurements, 'hookhalf');
  const feed = feedTable(measurements, 'post64feed', 'post64');
  const sections = rows.length > 0 ? [table(rows)] : [];
  const durable = prototypeTable(
    measurements,
    scenarios.filter((s) => s.prototype).map((s) => [s.key, s.title]),
  );
  if (durable) sections.push(`The service against the durable prototype (bench/prototype.ts), in the same runs:\n\n${durable}`);
  const equal = prototypeTable(
    measurements,
    scenarios.filter((s) => s.equalWork).map((s) => [s.key, s.title]),
    'equal-work',
  );
  if (equal) {
    sections.push(
      `The service against the equal-work prototype (../shared/bench/equal-work-prototype.js: the service's durable work and nothing else), in the same runs:\n\n${equal}`,
    );
  }
  const reads = prototypeTable(
    measurements,
    scenarios.filter((s) => s.readPrototype).map((s) => [s.key, s.title]),
    'read prototype',
  );
  if (reads) sections.push(`The service against the read prototype (bench/read-prototype.ts), in the same runs:\n\n${reads}`);
  const underWrites = underWritesTable(measurements, 'getunderpost', 'getpaced');
  if (underWrites) {
    sections.push(
      `GET by id while POSTs run (open loop: latency from when each GET was due; the same GETs alone, then with 64 POST connections beside; the table above divides the server CPU by the GETs alone, this one by every answer):\n\n${underWrites}`,
    );
  }
  if (hooks) sections.push(`Webhook scenario (one subscriber, a loopback receiver answering 204):\n\n${hooks}`);
  if (lag) sections.push(`Delivery lag at half the maximum rate (open loop, one subscriber; target: lag p99 < 1 s, peak RSS < 200 MB):\n\n${lag}`);
  const fifth = lagTable(measurements, 'hookfifth');
  if (fifth) sections.push(`Delivery lag at a fifth of the maximum rate, one core (target: lag p99 < 1 s):\n\n${fifth}`);
  const deliveries = deliveryCpuTable(measurements, 'hookfifth', 'postfifth');
  if (deliveries) sections.push(`What a delivery costs at a fifth of the maximum rate (target: at most a POST's CPU):\n\n${deliveries}`);
  const twoCores = lagTable(measurements, 'hookhalf2');
  if (twoCores) sections.push(`Delivery lag at half the maximum rate, two cores (target: lag p99 < 1 s):\n\n${twoCores}`);
  const typing = typingTable(
    measurements,
    scenarios.filter((s) => s.key.startsWith('type')).map((s) => [s.key, s.title]),
  );
  if (typing) sections.push(`Searches as people type them (open loop; target: p99 ≤ 30 ms):\n\n${typing}`);
  if (feed) sections.push(`Change-feed scenario (open GET /events streams, read in the runner's process, bench/streams.ts):\n\n${feed}`);
  if (idle.length > 0)
    sections.push(`Idle memory (bench/idle.ts: the service's VmRSS each second after it is ready, on an empty store):\n\n${idleTable(idle)}`);
  if (imports.length > 0) {
    sections.push(
      `Import scenario (POST /plants/import, NDJSON, into an empty store; the bare driver writes the same rows straight into the database, bench/import-reference.ts):\n\n${importTable(imports, POSTGRES ? 'postgres' : 'sqlite')}`,
    );
  }
  const targets = targetsTable(measurements, POSTGRES ? 'postgres' : 'sqlite');
  if (targets) sections.push(`Targets of the fifth round in this run:\n\n${targets}`);
  const text = sections.join('\n\n');
  process.stdout.write(`\n${text}\n`);
  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}${PG_URL ? ' (DATABASE_URL=postgres://…)' : ''}`;
  const generated = [
    `## ${POSTGRES ? 'PostgreSQL' : 'SQLite'} run`,
    '',
    `- Machine: ${machine()}`,
    `- Date: ${new Date().toISOString()}; command: \`${command}\`; took ${((Date.now() - started) / 1000).toFixed(0)} s`,
    `- Store: ${store.label}. Each measurement: ${WARMUP_MS} ms warm-up, then ${DURATION_MS} ms measured; ${Math.max(2, RUNS)} runs per server, alternating.`,
    `- Pinning: ${HAS_TASKSET ? 'servers on CPU 0, load generator on CPU 1 (taskset)' : 'none (taskset missing)'}; service started as shipped: \`NODE_ENV=production node dist/src/server.js\`, LOG_LEVEL default (info, one access line per request to a file).`,
    '',
    text,
  ].join('\n');
  if (!ONLY && !QUICK) {
    writeResults(join(ROOT, 'bench', 'RESULTS.md'), POSTGRES ? 'postgres' : 'sqlite', generated);
    process.stdout.write('\nwrote bench/RESULTS.md\n');
  } else {
    process.stdout.write('\n(--only or --quick: bench/RESULTS.md left as it was)\n');
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
