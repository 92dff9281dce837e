import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { after } from 'node:test';
import { fileURLToPath } from 'node:url';
import { baseEnv, type Exit } from '../process.js';
import { until } from '../toolkit.js';

/**
 * The supervisor and its workers as an operator sees them: `plant-store serve` run from an installed
 * copy of the package (bin/, the server's bundle dist/server/ and the compiled dist/src/ its threads run,
 * package.json, its node_modules), which a test can
 * change in place as a new release's install would, then reload; the workers' pids and versions read
 * from the log (each worker's "plant store ready" line).
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** An install of this checkout's build in `dir`, as `npm install` of its tarball lays it out (node_modules linked). */
export function install(dir: string): string {
  mkdirSync(join(dir, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
  cpSync(join(ROOT, 'dist', 'src'), join(dir, 'dist', 'src'), { recursive: true });
  cpSync(join(ROOT, 'dist', 'server'), join(dir, 'dist', 'server'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/**
 * The file of an install's server bundle that holds a worker's code (src/process/serving.ts: what the supervisor
 * never loads), where a test puts what a broken release does as a worker starts.
 */
export function servingChunk(dir: string): string {
  const bundle = join(dir, 'dist', 'server');
  const [name, ...more] = readdirSync(bundle).filter((file) => /^serving-\w+\.js$/.test(file));
  assert.ok(name !== undefined && more.length === 0, `one chunk of a worker's code in ${bundle}`);
  return join(bundle, name);
}

/** A new release installed in place: the same code under another version (what /healthz and the log then name). */
export function setVersion(dir: string, version: string): void {
  const file = join(dir, 'package.json');
  writeFileSync(file, JSON.stringify({ ...(JSON.parse(readFileSync(file, 'utf8')) as object), version }, null, 2));
}

export interface Worker {
  pid: number;
  version: string;
}

export interface Supervised {
  url: string;
  port: number;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** The workers that said they were ready, in order (those that have exited included). */
  workers(): Worker[];
  running(): boolean;
  exited: Promise<Exit>;
  signal(signal: NodeJS.Signals): void;
}

/** `node <dir>/bin/plant-store.js serve` (the checkout's own when no dir), resolving once `count` workers are ready. */
export async function serve(
  cleanup: typeof after,
  env: Record<string, string | undefined>,
  options: { dir?: string; count?: number } = {},
): Promise<Supervised> {
  const script = join(options.dir ?? ROOT, 'bin', 'plant-store.js');
  const child = spawn(process.execPath, [script, 'serve'], {
    cwd: options.dir,
    // No shedding for a lagging loop unless a test asks (test/process.ts says why).
    env: baseEnv({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SHUTDOWN_DRAIN_MS: '0', OVERLOAD_EVENT_LOOP_DELAY_MS: '0', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Exit>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  const workers = () =>
    stdout
      .split('\n')
      .filter((line) => line.includes('"msg":"plant store ready"'))
      .map((line) => JSON.parse(line) as Worker);
  cleanup(async () => {
    // The workers too, should the test have left any (they exit with their supervisor anyway): those the
    // supervisor has now, never a pid its log once named, which a process of another test may have by now.
    if (child.pid !== undefined) killAll(children(child.pid));
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const running = () => child.exitCode === null && child.signalCode === null;
  await until(() => !running() || workers().length >= (options.count ?? 1), `the workers to be ready; stderr: ${stderr}`, { timeoutMs: 60_000 });
  if (!running()) throw new Error(`the server exited before it served\nstdout: ${stdout}\nstderr: ${stderr}`);
  const url = /Server listening at (http:\/\/[^\s"]+)/.exec(stdout)![1]!;
  return {
    url,
    port: Number(new URL(url).port),
    pid: child.pid!,
    stdout: () => stdout,
    stderr: () => stderr,
    workers,
    running,
    exited,
    signal: (signal) => child.kill(signal),
  };
}

/**
 * A port free now. PORT=0 would do while the socket lives, but a socket closed and opened again (the only
 * worker crashed and replaced) would get another port: a test that follows the service through that needs one.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/** The pids of the workers that said they were ready in this log (a supervisor's stdout). */
export function workerPids(stdout: string): number[] {
  return stdout
    .split('\n')
    .filter((line) => line.includes('"msg":"plant store ready"'))
    .map((line) => (JSON.parse(line) as { pid: number }).pid);
}

/**
 * A crash of the whole service, as a power cut or `systemctl kill -s KILL` makes it: SIGKILL to every
 * worker that serves, then to the supervisor (killed alone, it would let its workers exit by themselves).
 */
export function killService(server: { readonly child: { readonly pid?: number | undefined }; signal(signal: NodeJS.Signals): void }): void {
  if (server.child.pid !== undefined) killAll(children(server.child.pid));
  server.signal('SIGKILL');
}

/**
 * The child processes of `pid` (a supervisor's: its workers), as the operating system lists them now; none
 * once it has exited. Workers are known this way, not by the pids a log named: a worker replaced long ago
 * has exited, and its pid, given out again (they wrap within minutes on a busy machine), may be another
 * test's worker or a PostgreSQL server's.
 */
export function children(pid: number): number[] {
  let listed: string;
  try {
    listed = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return listed
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number)
    .sort((a, b) => a - b);
}

/** SIGKILL to each of these processes that still runs. */
function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
}

/** Whether a process of this pid runs. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The inode of the socket listening on this TCP port (/proc/net/tcp): the same inode, the same socket, never closed meanwhile. */
export function listeningSocket(port: number): string | undefined {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is ADDR:PORT; st 0A is LISTEN; the inode is the tenth field.
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A') return fields[9];
    }
  }
  return undefined;
}
