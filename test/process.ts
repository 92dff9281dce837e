import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { after } from 'node:test';
import { until } from './toolkit.js';

/**
 * Runs the built server (its bundle, dist/server/index.js) and the CLI (bin/plant-store.js) as real processes, the
 * way an operator does. Tests use these for what in-process inject cannot show: start-up, signals,
 * durability across a kill, and several processes sharing one database.
 */

/** The server as it ships: its bundle (scripts/bundle.mjs), which `plant-store serve` runs. */
export const SERVER_JS = fileURLToPath(new URL('../server/index.js', import.meta.url));
export const CLI_JS = fileURLToPath(new URL('../../bin/plant-store.js', import.meta.url));

/** Generous: the machine is shared and slow at times; a healthy start takes well under a second. */
const START_TIMEOUT_MS = 30_000;
const EXIT_TIMEOUT_MS = 30_000;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Only what a process needs from the outer environment, so a DATABASE_URL, PORT or PLANT_STORE_TOKENS
 * set where the tests run never leaks into them.
 */
export function baseEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const keep: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'SYSTEMROOT', 'LANG']) {
    if (process.env[name] !== undefined) keep[name] = process.env[name];
  }
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete keep[name];
    else keep[name] = value;
  }
  return keep;
}

/** A child whose output is collected and whose exit is a promise. */
class Collected {
  stdout = '';
  stderr = '';
  readonly exited: Promise<Exit>;

  constructor(readonly child: ChildProcess) {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve, reject) => {
      child.once('error', reject);
      // 'close' (not 'exit'): every byte of stdout and stderr has been read by then.
      child.once('close', (code, signal) => resolve({ code, signal }));
    });
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The exit, or a rejection naming what the process printed when it does not exit in time. */
  async waitForExit(timeoutMs = EXIT_TIMEOUT_MS): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`process did not exit within ${timeoutMs} ms\nstderr: ${this.stderr}`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

export interface ServerProcess {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  readonly exited: Promise<Exit>;
  readonly running: boolean;
  /** Sends the signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
  /** Sends the signal and returns at once. */
  signal(signal: NodeJS.Signals): void;
}

export interface StartOptions {
  /** Added to a minimal environment; undefined removes a variable. PORT defaults to 0 (a free port). */
  env?: Record<string, string | undefined>;
  cwd?: string;
}

const LISTENING = /Server listening at (http:\/\/[^\s"]+)/;

/**
 * Starts `node dist/server/index.js` and resolves once /healthz answers. PORT=0 lets the kernel pick a
 * free port (no race with other tests); the address comes from Fastify's "Server listening at" line.
 * The process is killed when the test file ends, whatever happened. Give it the `after` of the file or
 * of a suite body: an after() registered from inside a before() hook runs as soon as that hook ends.
 */
export async function startServer(cleanup: typeof after, options: StartOptions = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [SERVER_JS], {
    cwd: options.cwd,
    // No drain on SIGTERM unless a test asks: no load balancer follows these servers' /readyz. No shedding
    // for a lagging event loop either (as testApp): on a loaded machine one slow first request (the OpenAPI
    // document built, serializers compiled) lagged the loop past 500 ms, and the next request got a 503
    // that is no bug (a CI run beside other work, once). Shedding has tests of its own.
    env: baseEnv({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SHUTDOWN_DRAIN_MS: '0', OVERLOAD_EVENT_LOOP_DELAY_MS: '0', ...options.env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const proc = new Collected(child);
  cleanup(async () => {
    if (proc.running) child.kill('SIGKILL');
    await proc.exited.catch(() => undefined);
  });

  const url = await until(
    () => {
      if (!proc.running) throw new Error(`server exited before listening\nstdout: ${proc.stdout}\nstderr: ${proc.stderr}`);
      return LISTENING.exec(proc.stdout)?.[1];
    },
    'the server to listen',
    { timeoutMs: START_TIMEOUT_MS },
  ).catch((error: Error) => {
    throw new Error(`${error.message}\nstderr: ${proc.stderr}`);
  });
  // A server that stops after it listened (a worker that could not start stops the others) fails here with
  // what it printed, as one that never listened does above; so does one that never answers 200.
  let lastProbe = 'no answer yet';
  await until(
    async () => {
      if (!proc.running) throw new Error('server exited after it listened');
      const answer = await fetch(`${url}/healthz`).catch((error: Error) => ((lastProbe = `${error.message} (${String(error.cause)})`), undefined));
      if (!answer) return false;
      lastProbe = `status ${answer.status}`;
      await answer.body?.cancel();
      return answer.status === 200;
    },
    'server to answer /healthz',
    { timeoutMs: START_TIMEOUT_MS },
  ).catch((error: Error) => {
    throw new Error(`${error.message} (last: ${lastProbe})\nstdout: ${proc.stdout}\nstderr: ${proc.stderr}`);
  });

  const listeningUrl = url;
  return {
    url: listeningUrl,
    port: Number(new URL(listeningUrl).port),
    child,
    get stdout() {
      return proc.stdout;
    },
    get stderr() {
      return proc.stderr;
    },
    exited: proc.exited,
    get running() {
      return proc.running;
    },
    signal(signal) {
      child.kill(signal);
    },
    async stop(signal = 'SIGTERM') {
      if (proc.running) child.kill(signal);
      return proc.waitForExit();
    },
  };
}

export interface Ran extends Exit {
  stdout: string;
  stderr: string;
}

/** A CLI failure as it is reported: exit 1, nothing on stdout, exactly this one line on stderr. */
export function assertFails(result: Ran, line: string | RegExp): void {
  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.stdout, '');
  if (typeof line === 'string') assert.equal(result.stderr, `plant-store: ${line}\n`);
  else {
    assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr);
    assert.match(result.stderr, line);
  }
}

/**
 * The run with its import progress lines ("plant-store: 120 rows read…") taken out of stderr: one comes only
 * when reading takes longer than a second (src/cli/plant-args.ts, PROGRESS_MS), as it may on a busy machine
 * for a single row, while the writer thread starts.
 */
export function withoutProgress(ran: Ran): Ran {
  return { ...ran, stderr: ran.stderr.replace(/^plant-store: [\d,]+ rows? read…\n/gm, '') };
}

/** Runs a process to its end: the server expected to refuse to start, or a CLI command. */
export async function run(args: string[], options: StartOptions & { timeoutMs?: number; input?: string } = {}): Promise<Ran> {
  const child = spawn(process.execPath, args, {
    cwd: options.cwd,
    env: baseEnv(options.env ?? {}),
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (options.input !== undefined) child.stdin!.end(options.input);
  const proc = new Collected(child);
  try {
    const exit = await proc.waitForExit(options.timeoutMs);
    return { ...exit, stdout: proc.stdout, stderr: proc.stderr };
  } finally {
    if (proc.running) child.kill('SIGKILL');
  }
}

/** `plant-store ...args` against the store `databaseUrl` names. */
export function cli(databaseUrl: string, ...args: string[]): Promise<Ran> {
  return run([CLI_JS, ...args], { env: { DATABASE_URL: databaseUrl } });
}

/**
 * The first-start token a server printed on stderr, waited for: it is written once the server listens (a start
 * that fails makes none), and the line that says it listens, on the other pipe, may be read first.
 */
export function firstToken(stderr: () => string): Promise<string> {
  return until(() => /^ {4}(ps_\S+)$/m.exec(stderr())?.[1], 'the first-start token on stderr');
}

/** A request with a bearer token and a JSON body, answered as status + raw text (ids beyond 2^53 stay exact). */
export async function request(
  url: string,
  options: { method?: string; token?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; text: string; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  const response = await fetch(url, { method: options.method ?? 'GET', headers, body: options.body });
  return { status: response.status, text: await response.text(), headers: response.headers };
}
