import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startOtlpSink, type OtlpSink } from './otlp-sink.js';
import type { Scenario } from './scenarios.js';
import {
  BASELINE_JS,
  EQUAL_WORK_JS,
  freePort,
  PROTOTYPE_JS,
  READ_PROTOTYPE_JS,
  SERVICE_JS,
  SERVICE_MODULES_JS,
  startServer,
  STORE_PROTOTYPE_JS,
  type Running,
} from './servers.js';
import { SETTINGS } from './settings.js';
import type { BenchStore } from './stores.js';

/**
 * The servers a scenario measures, each started for one run: the bare baseline, the prototypes, the service
 * as shipped, another build of it (`--compare`) and json-server (`--peers`).
 */
export type Target = 'baseline' | 'prototype' | 'equal-work' | 'store prototype' | 'read prototype' | 'service' | 'compared' | 'json-server 0.17';

export const HAS_EQUAL_WORK = existsSync(EQUAL_WORK_JS);

/** Where the servers write their output, and json-server its files: the run's own folder. */
export interface Workspace {
  dir: string;
  logFile: string;
}

/** The tracing scenarios' collector, started with the first of them. */
let otlpSink: OtlpSink | undefined;
let jsonServers = 0;

/** What the collector received since last asked (undefined when no tracing scenario ran). */
export const takeTraces = () => otlpSink?.take();
export const closeOtlpSink = async () => otlpSink?.close();

/** The settings a scenario gives the service, beyond its own `env`. */
async function serviceEnv(port: number, databaseUrl: string, scenario: Pick<Scenario, 'env' | 'otlp'>): Promise<Record<string, string>> {
  return {
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    PLANT_STORE_TOKENS: SETTINGS.token,
    // The webhook scenario's subscriber listens on loopback.
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    ...(SETTINGS.synchronous ? { SQLITE_SYNCHRONOUS: SETTINGS.synchronous } : {}),
    ...(process.env.LOG_LEVEL ? { LOG_LEVEL: process.env.LOG_LEVEL } : {}),
    // PostgreSQL's pools, as the bench was started with (both servers get the same): to measure how reads fare with fewer connections.
    ...Object.fromEntries(['PG_POOL_SIZE', 'PG_READ_POOL_SIZE'].flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : []))),
    ...(scenario.otlp ? { OTEL_EXPORTER_OTLP_ENDPOINT: (otlpSink ??= await startOtlpSink()).endpoint } : {}),
    ...scenario.env,
  };
}

/** Starts one server for one run of a scenario; the service and the compared build also say which store they serve. */
export async function start(
  target: Target,
  scenario: Pick<Scenario, 'seeded' | 'names' | 'env' | 'otlp' | 'cpus'>,
  store: BenchStore,
  workspace: Workspace,
): Promise<Running & { databaseUrl?: string }> {
  const port = await freePort();
  const common = { port, logFile: workspace.logFile, cpus: scenario.cpus };
  const token = SETTINGS.token;
  switch (target) {
    case 'baseline':
      return startServer({ ...common, name: target, args: [BASELINE_JS], env: { PORT: String(port), BENCH_TOKEN: token }, readyPath: '/healthz' });
    case 'prototype':
    case 'store prototype':
      // Each writes to a fresh store of the run's kind.
      return startServer({
        ...common,
        name: target,
        args: [target === 'prototype' ? PROTOTYPE_JS : STORE_PROTOTYPE_JS],
        env: { PORT: String(port), BENCH_TOKEN: token, DATABASE_URL: await store.url(0) },
        readyPath: '/healthz',
      });
    case 'equal-work':
      // Its store is a fresh SQLite file, as the service's (a path, not a URL); it has no route for a probe.
      return startServer({
        ...common,
        name: target,
        args: [EQUAL_WORK_JS],
        env: { PORT: String(port), TOKEN: token, DB: (await store.url(0)).replace(/^file:/, '') },
        readyPath: '/',
        anyAnswer: true,
      });
    case 'read prototype':
      return startServer({
        ...common,
        name: target,
        args: [READ_PROTOTYPE_JS],
        env: { PORT: String(port), BENCH_TOKEN: token, DATABASE_URL: await store.url(scenario.seeded, scenario.names) },
        readyPath: '/healthz',
      });
    case 'service':
    case 'compared': {
      const profileArgs = SETTINGS.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${SETTINGS.profileDir}`] : [];
      // Profiled, the service runs from its modules: the stage table reads stages off the source files' paths.
      const serviceJs = SETTINGS.cpuProf ? SERVICE_MODULES_JS : SERVICE_JS;
      const databaseUrl = await store.url(scenario.seeded, scenario.names);
      const running = await startServer({
        ...common,
        name: target,
        args: [...profileArgs, target === 'compared' ? SETTINGS.compare! : serviceJs],
        env: await serviceEnv(port, databaseUrl, scenario),
        readyPath: '/readyz',
      });
      return { ...running, databaseUrl };
    }
    case 'json-server 0.17': {
      const dir = join(workspace.dir, `json-server-${++jsonServers}`);
      mkdirSync(dir);
      writeFileSync(join(dir, 'db.json'), '{"plants": []}\n');
      return startServer({
        port,
        logFile: workspace.logFile,
        name: 'json-server',
        args: [await jsonServerBin(), '--port', String(port), '--host', '127.0.0.1', '--quiet', join(dir, 'db.json')],
        env: {},
        readyPath: '/plants',
      });
    }
  }
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

/** The servers a scenario runs, in the order of each round. */
export function targetsOf(scenario: Scenario): Target[] {
  return [
    ...(scenario.rateOf || scenario.rate ? [] : (['baseline'] as const)),
    ...(scenario.prototype ? (['prototype'] as const) : []),
    // better-sqlite3 only, and only where the shared anchors are beside the repository.
    ...(scenario.equalWork && !SETTINGS.postgres && HAS_EQUAL_WORK ? (['equal-work'] as const) : []),
    ...(scenario.storePrototype ? (['store prototype'] as const) : []),
    // better-sqlite3 only: on PostgreSQL the reads are measured against the baseline alone.
    ...(scenario.readPrototype && !SETTINGS.postgres ? (['read prototype'] as const) : []),
    'service',
    // A seeded store is made by this build's migrations, which an earlier build may not know (it refuses a
    // newer schema): the compared build runs where each run has a fresh store, unless told it is the same.
    ...(SETTINGS.compare && (scenario.seeded === 0 || process.env.BENCH_COMPARE_SEEDED === '1') ? (['compared'] as const) : []),
    ...(SETTINGS.peers && scenario.peers ? (['json-server 0.17'] as const) : []),
  ];
}
