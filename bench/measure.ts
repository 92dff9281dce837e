import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { start, takeTraces, type Target, type Workspace } from './contenders.js';
import { idleTable, measureIdle, type IdleMeasurement } from './idle.js';
import { importBare, importOverHttp, IMPORT_ROWS, type ImportMeasurement } from './import.js';
import type { AlongsideResult, LoadOptions, LoadResult } from './load.js';
import { servingPid } from './proc.js';
import type { Measurement } from './report.js';
import { WRITE_ID_MIN } from './requests.js';
import { SCENARIOS, type Scenario } from './scenarios.js';
import { sampleSearchLag } from './search-lag.js';
import { LOAD_BESIDE_JS, LOAD_JS, pinned, ROOT } from './servers.js';
import { SETTINGS } from './settings.js';
import type { ProfiledRun } from './stages.js';
import type { BenchStore } from './stores.js';
import { openStreams } from './streams.js';
import { subscribe } from './subscriber.js';

/** One run of one server in one scenario: the server started, the load generator run against it, what both saw. */

let runCounter = 0;

/**
 * A load generator process (bench/load.ts, or bench/load-beside.ts for a scenario's `alongside` connections),
 * on the load's CPU: `result` is the JSON line it prints before it exits.
 */
function loadProcess<T>(script: string, options: LoadOptions) {
  const [command, commandArgs] = pinned(1, [script, JSON.stringify(options)]);
  const child = spawn(command, commandArgs, { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const result = new Promise<T>((resolve, reject) => {
    child.once('close', (code) => {
      if (code !== 0) return reject(new Error(`the load generator (${script}) exited with ${code}`));
      resolve(JSON.parse(out) as T);
    });
  });
  return { child, result };
}

/**
 * The load generator run against a server. A scenario's `alongside` connections run in a process of their
 * own on the same CPU (bench/load-beside.ts), started first, told the measured window when the load ends.
 */
async function runLoadProcesses(options: LoadOptions): Promise<LoadResult> {
  if (options.alongside === undefined) return loadProcess<LoadResult>(LOAD_JS, options).result;
  const beside = loadProcess<AlongsideResult>(LOAD_BESIDE_JS, options);
  // Handled: when the measured load fails first, the killed process's exit is not waited for.
  beside.result.catch(() => undefined);
  try {
    const measured: LoadOptions = { ...options };
    delete measured.alongside;
    const result = await loadProcess<LoadResult>(LOAD_JS, measured).result;
    beside.child.stdin.end(`${JSON.stringify(result.windowUs)}\n`);
    return { ...result, alongside: await beside.result };
  } finally {
    beside.child.kill();
  }
}

/** The load generator's options for one run (`maxRate`: the closed-loop rate an open-loop scenario takes a share of). */
function loadOptions(scenario: Scenario, port: number, pid: number, maxRate: number | undefined): LoadOptions {
  const idBase = WRITE_ID_MIN + ++runCounter * 10_000_000;
  return {
    port,
    connections: scenario.connections,
    warmupMs: SETTINGS.warmupMs,
    durationMs: SETTINGS.durationMs,
    token: SETTINGS.token,
    workload: scenario.workload(idBase),
    serverPid: pid,
    ...(maxRate === undefined || scenario.rateOf === undefined ? {} : { rate: maxRate * scenario.rateOf.share }),
    ...(scenario.rate === undefined ? {} : { rate: scenario.rate }),
    ...(scenario.alongside === undefined
      ? {}
      : { alongside: { connections: scenario.alongside.connections, workload: scenario.alongside.workload(idBase) } }),
  };
}

export async function measure(target: Target, scenario: Scenario, store: BenchStore, workspace: Workspace, maxRate?: number): Promise<Measurement> {
  const server = await start(target, scenario, store, workspace);
  try {
    const subscriber = scenario.subscriber && target !== 'baseline' ? await subscribe(server.port, SETTINGS.token) : undefined;
    const streams = scenario.streams && target !== 'baseline' ? await openStreams(server.port, SETTINGS.token, scenario.streams) : undefined;
    // Writes on SQLite: how far the search index, which follows them, is behind while they run.
    const searchLag = server.databaseUrl && scenario.workload(0).kind === 'post' ? sampleSearchLag(server.databaseUrl) : undefined;
    const result = await runLoadProcesses(loadOptions(scenario, server.port, server.pid, maxRate));
    const lag = await searchLag?.finish();
    if (lag) {
      process.stdout.write(
        `  ${target}: search index behind the writes p99 ${lag.p99Ms} ms, max ${lag.maxMs} ms; caught up ${lag.drainMs} ms after the load\n`,
      );
    }
    const webhooks = await subscriber?.finish();
    const feed = await streams?.finish();
    const peak = server.peakRssMb();
    if (SETTINGS.cpuProf && (target === 'service' || target === 'compared')) {
      // The profile to read is the serving process's: a supervisor's worker (which inherits --cpu-prof) since 1.1.0.
      const pid = servingPid(server.pid);
      const run: ProfiledRun = { pid, scenario: scenario.key, target, windowUs: result.windowUs, requests: result.requests };
      writeFileSync(join(SETTINGS.profileDir, `run-${pid}.json`), JSON.stringify(run));
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
    const traces = scenario.otlp && target !== 'baseline' ? takeTraces() : undefined;
    if (traces) process.stdout.write(`  ${target}: ${traces.exports} OTLP exports, ${(traces.bytes / 1e6).toFixed(1)} MB of spans\n`);
  }
}

/** Server CPU as a share of a core and per request, its main thread's part beside. */
function serverCpu(m: Measurement): string {
  if (m.serverCpu === undefined) return '?';
  const perRequest = (share: number) => ((share / m.reqPerSec) * 1e6).toFixed(0);
  return `${(m.serverCpu * 100).toFixed(0)}% (${perRequest(m.serverCpu)} µs/req${m.serverMainCpu === undefined ? '' : `, main thread ${perRequest(m.serverMainCpu)}`})`;
}

/** One measurement as the runner prints it while it goes. */
export function line(m: Measurement): string {
  const indent = ' '.repeat(19);
  return (
    `  ${m.target.padEnd(16)} ${m.reqPerSec.toFixed(0).padStart(7)} req/s  p50 ${m.p50Ms.toFixed(2)} ms  p99 ${m.p99Ms.toFixed(2)} ms  ` +
    `server CPU ${serverCpu(m)}  client CPU ${(m.clientCpu * 100).toFixed(0)}%  ` +
    `RSS ${m.peakRssMb?.toFixed(0) ?? '?'} MB  ready ${m.readyMs.toFixed(0)} ms  errors ${m.errors}  non-2xx ${m.non2xx}` +
    (m.firstNon2xx ? ` (first ${m.firstNon2xx})` : '') +
    (m.paced
      ? `\n${indent}open loop: ${m.paced.rate.toFixed(0)} req/s asked${m.maxRate === undefined ? '' : ` (a share of ${m.maxRate.toFixed(0)})`}, ${m.paced.acknowledged} acknowledged in all, backlog at most ${m.paced.maxBacklog}`
      : '') +
    (m.alongside
      ? `\n${indent}alongside: ${m.alongside.connections} connections answered ${m.alongside.reqPerSec.toFixed(0)} req/s, p50 ${m.alongside.p50Ms.toFixed(2)} ms p99 ${m.alongside.p99Ms.toFixed(2)} ms, errors ${m.alongside.errors}, non-2xx ${m.alongside.non2xx}${m.alongside.clientCpu === undefined ? '' : `, their client's CPU ${(m.alongside.clientCpu * 100).toFixed(0)}%`}`
      : '') +
    (m.webhooks
      ? `\n${indent}webhooks: ${m.webhooks.delivered} delivered (${m.webhooks.deliveredDuringLoad} during the load), lag p50 ${m.webhooks.lagP50Ms.toFixed(0)} ms p99 ${m.webhooks.lagP99Ms.toFixed(0)} ms, drained ${m.webhooks.drainMs} ms after the load`
      : '') +
    (m.feed
      ? `\n${indent}event streams: ${m.feed.streams}, ${m.feed.eventsMin}–${m.feed.eventsMax} events each, lag p50 ${m.feed.lagP50Ms} ms p99 ${m.feed.lagP99Ms} ms, drained ${m.feed.drainMs} ms after the load, readers' CPU ${(m.feed.readerCpu * 100).toFixed(0)}%`
      : '')
  );
}

/**
 * The maximum rate an open-loop scenario takes a share of, for one server: the mean of its runs of that
 * scenario in this bench run, or one run of it measured now (printed, not tabled) when it was not part of it.
 */
export async function maximumRate(
  scenario: Scenario,
  target: Target,
  store: BenchStore,
  workspace: Workspace,
  measurements: Measurement[],
): Promise<number> {
  const key = scenario.rateOf!.scenario;
  const runs = measurements.filter((m) => m.scenario === key && m.target === target);
  if (runs.length > 0) return runs.reduce((sum, m) => sum + m.reqPerSec, 0) / runs.length;
  const of = SCENARIOS.find((s) => s.key === key);
  if (!of) throw new Error(`${scenario.key}: no scenario ${key} to take the maximum rate from`);
  const m = await measure(target, of, store, workspace);
  process.stdout.write(`${line(m)}  (${key}: the maximum rate)\n`);
  return m.reqPerSec;
}

/** The idle-memory measurement (bench/idle.ts): the service's RSS after start, on an empty store. */
export const IDLE_KEY = 'idle';

export async function idleRuns(store: BenchStore, workspace: Workspace): Promise<{ runs: IdleMeasurement[]; table: string }> {
  process.stdout.write(`Idle memory after start (${store.label})\n`);
  const runs: IdleMeasurement[] = [];
  for (let run = 0; run < SETTINGS.runs; run++) {
    const m = await measureIdle(() => start('service', { seeded: 0 }, store, workspace), SETTINGS.quick ? 15 : 60);
    runs.push(m);
    process.stdout.write(
      `  service: ${m.afterStartMb.toFixed(0)} MB 5 s after ready, settled at ${m.settledMb.toFixed(0)} MB (PSS ${m.afterStartPssMb.toFixed(0)}, settled ${m.settledPssMb.toFixed(0)} MB)\n`,
    );
  }
  return { runs, table: idleTable(runs) };
}

/** The import scenario (bench/import.ts): the bare driver and the service alternately, each into a fresh store. */
export const IMPORT_KEY = 'import1m';
const IMPORT_REFERENCE_JS = join(ROOT, 'dist', 'bench', 'import-reference.js');

export async function importRuns(store: BenchStore, workspace: Workspace): Promise<ImportMeasurement[]> {
  const rows = SETTINGS.quick ? IMPORT_ROWS / 5 : IMPORT_ROWS;
  process.stdout.write(`Import of ${rows.toLocaleString('en-US')} plants, NDJSON over HTTP, into an empty store (${store.label})\n`);
  const measurements: ImportMeasurement[] = [];
  const show = (m: ImportMeasurement) => {
    measurements.push(m);
    const perSecond = Math.round(m.rows / m.seconds).toString();
    process.stdout.write(
      `  ${m.target.padEnd(16)} ${perSecond.padStart(7)} plants/s  ${m.seconds.toFixed(2)} s  CPU ${m.cpuSeconds?.toFixed(1) ?? '?'} s  RSS ${m.peakRssMb?.toFixed(0) ?? '?'} MB\n`,
    );
  };
  for (let run = 0; run < SETTINGS.runs; run++) {
    show(await importBare(IMPORT_REFERENCE_JS, await store.url(0), rows));
    for (const target of SETTINGS.compare ? (['service', 'compared'] as const) : (['service'] as const)) {
      const server = await start(target, { seeded: 0 }, store, workspace);
      try {
        const result = await importOverHttp(server.port, SETTINGS.token, rows, server.pid);
        show({ target, ...result, peakRssMb: server.peakRssMb() });
      } finally {
        await server.stop();
      }
    }
  }
  return measurements;
}
