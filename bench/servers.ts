import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { peakRssMb } from './proc.js';

/** Starting and stopping the servers under test, each pinned to its own CPU when taskset exists. */

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The service as it ships: its bundle (scripts/bundle.mjs, run by `npm run bench` first), what `plant-store serve` runs. */
export const SERVICE_JS = `${ROOT}dist/server/index.js`;
/**
 * The same service from its modules (dist/src/, shipped beside the bundle): what `--cpu-prof` runs, since the
 * stage table (bench/stages.ts) gives each sample to a stage by the source file its frame names, and in the
 * bundle every frame names the bundle's files. The request path is the same code either way.
 */
export const SERVICE_MODULES_JS = `${ROOT}dist/src/server.js`;
export const BASELINE_JS = `${ROOT}dist/bench/baseline.js`;
export const PROTOTYPE_JS = `${ROOT}dist/bench/prototype.js`;
export const READ_PROTOTYPE_JS = `${ROOT}dist/bench/read-prototype.js`;
export const STORE_PROTOTYPE_JS = `${ROOT}dist/bench/store-prototype.js`;
export const LOAD_JS = `${ROOT}dist/bench/load.js`;
export const LOAD_BESIDE_JS = `${ROOT}dist/bench/load-beside.js`;
/**
 * The equal-work prototype (shared with the team beside the repository, `../shared/bench/`): node:http and
 * better-sqlite3 doing the service's durable work for POST /plants and nothing else (its header says what).
 */
export const EQUAL_WORK_JS = `${ROOT}../shared/bench/equal-work-prototype.js`;

export const HAS_TASKSET = spawnSync('taskset', ['-c', '0', 'true']).status === 0;

/** The command line for a node process, pinned to one CPU (or a list, `0,1`) when taskset is there. */
export function pinned(cpu: number | string, args: string[]): [string, string[]] {
  return HAS_TASKSET ? ['taskset', ['-c', String(cpu), process.execPath, ...args]] : [process.execPath, args];
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function status(port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    const request = get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    request.on('error', () => resolve(0));
    request.setTimeout(1000, () => request.destroy());
  });
}

/**
 * The service's environment where a bench script starts it on its own (bench:drain, bench:first-delivery):
 * production, on loopback, its SQLite file in `dir`, one static token, webhooks to loopback receivers allowed.
 */
export function webhookBenchEnv(dir: string, port: number, token: string): Record<string, string> {
  return {
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: `file:${join(dir, 'plants.db')}`,
    PLANT_STORE_TOKENS: token,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  };
}

export interface Running {
  pid: number;
  port: number;
  /** Milliseconds from spawn until the server answered its first request. */
  readyMs: number;
  peakRssMb(): number | undefined;
  stop(): Promise<void>;
}

export interface StartOptions {
  name: string;
  args: string[];
  env: Record<string, string>;
  port: number;
  /** A path whose 2xx answer means ready. */
  readyPath: string;
  /** Any answer at all to readyPath means ready (a server with no route for a probe). */
  anyAnswer?: boolean;
  /** The CPUs it runs on: `0` (the default: one core, the load generator having CPU 1), or `0,1`. */
  cpus?: string;
  logFile: string;
  timeoutMs?: number;
}

/** Starts a server on CPU 0 and resolves when it answers, with how long that took. */
export async function startServer(options: StartOptions): Promise<Running> {
  const log = openSync(options.logFile, 'a');
  const [command, args] = pinned(options.cpus ?? 0, options.args);
  const started = performance.now();
  const child: ChildProcess = spawn(command, args, {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...options.env },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  const deadline = started + (options.timeoutMs ?? 30_000);
  for (;;) {
    if (exited) throw new Error(`${options.name} exited before it was ready; see ${options.logFile}`);
    const code = await status(options.port, options.readyPath);
    if ((code >= 200 && code < 300) || (options.anyAnswer === true && code !== 0)) break;
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${options.name} not ready after ${options.timeoutMs ?? 30_000} ms; see ${options.logFile}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const readyMs = performance.now() - started;
  const pid = child.pid!;
  return {
    pid,
    port: options.port,
    readyMs,
    peakRssMb: () => peakRssMb(pid),
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exit;
      clearTimeout(timer);
    },
  };
}
