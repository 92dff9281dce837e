import { spawn, type ChildProcess } from 'node:child_process';
import type { after } from 'node:test';
import { baseEnv, SERVER_JS, type Exit } from '../../../process.js';
import { sleep, until } from '../../../toolkit.js';

/**
 * A fleet as an operator runs one: instances on ports of their own (a balancer names each by its address),
 * each restarted or upgraded in turn on the same port: SIGTERM, wait for the exit, start the release
 * wanted, wait until it is ready and the balancer sends it requests, then the next.
 */

/** Generous bounds that prove "no hang", not speed: the machine is shared. */
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 90_000;

/** A build of the service: this checkout's, or an earlier release's built from git (previous-release.ts). */
export interface Release {
  /** How the test names it: "this checkout", "1.0.0 (6f10962)". */
  readonly name: string;
  /** Its dist/src/server.js. */
  readonly serverJs: string;
  /** Whether it drains on SIGTERM (/readyz 503 while it serves on): 1.0.0 stops at once. */
  readonly drains: boolean;
}

export const THIS_CHECKOUT: Release = { name: 'this checkout', serverJs: SERVER_JS, drains: true };

/** An access-log line of a request to one of the API's routes (not the balancer's /readyz checks). */
const API_REQUEST = /"url":"\/(?:plants|events|tokens|webhooks)/g;

export class Instance {
  private child: ChildProcess | undefined;
  private exited: Promise<Exit> | undefined;
  private output = '';
  /** Every stop of this instance: the release, how it exited, what it printed. */
  readonly history: Array<{ release: string; exit: Exit; output: string }> = [];
  release: Release | undefined;

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly env: Record<string, string>,
    cleanup: typeof after,
  ) {
    cleanup(async () => {
      if (this.running) this.child?.kill('SIGKILL');
      await this.exited?.catch(() => undefined);
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** What the running (or last) process wrote, stdout and stderr together. */
  get log(): string {
    return this.output;
  }

  /** The error lines (level 50 and up) of every process this instance ran, each with its release: where a 500 says why. */
  get errors(): string[] {
    const runs = [...this.history, ...(this.running ? [{ release: this.release?.name ?? '?', output: this.output }] : [])];
    return runs.flatMap((run) =>
      run.output
        .split('\n')
        .filter((line) => /"level":[56]0/.test(line))
        .map((line) => `${this.name} (${run.release}): ${line}`),
    );
  }

  /** What this process has written since `mark` (an earlier length of its log). */
  logSince(mark: number): string {
    return this.output.slice(mark);
  }

  /** Requests to the API this process has answered so far (its access log). */
  get served(): number {
    return (this.output.match(API_REQUEST) ?? []).length;
  }

  /** Starts `release` on this instance's port and resolves once /readyz answers 200. */
  async start(release: Release, extraEnv: Record<string, string> = {}): Promise<void> {
    if (this.running) throw new Error(`${this.name} is running already`);
    this.output = '';
    this.release = release;
    // No load shedding: on this shared machine others' work can hold an event loop past the limit for a
    // moment, and a 503 "overloaded" says nothing of a deploy (test/http/load-control.test.ts tests the shedding itself).
    const defaults = { HOST: '127.0.0.1', PORT: String(this.port), LOG_LEVEL: 'info', CONSOLE: 'off', OVERLOAD_EVENT_LOOP_DELAY_MS: '0' };
    const child = spawn(process.execPath, [release.serverJs], {
      env: baseEnv({ ...defaults, ...this.env, ...extraEnv }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    this.exited = new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code, signal) => resolve({ code, signal }));
    });
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (!this.running) throw new Error(`${this.name} (${release.name}) exited before it was ready:\n${this.output}`);
      const status = await fetch(`${this.url}/readyz`).then(
        (response) => response.status,
        () => 0,
      );
      if (status === 200) return;
      if (Date.now() > deadline) throw new Error(`${this.name} (${release.name}) was not ready within ${START_TIMEOUT_MS} ms:\n${this.output}`);
      await sleep(50);
    }
  }

  /** SIGTERM, as systemd or an orchestrator stops it, and the exit. */
  async stop(): Promise<Exit> {
    const child = this.child;
    if (!child || !this.exited) throw new Error(`${this.name} was never started`);
    if (this.running) child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${this.name} did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM:\n${this.output}`)),
        STOP_TIMEOUT_MS,
      );
    });
    try {
      const exit = await Promise.race([this.exited, timeout]);
      this.history.push({ release: this.release?.name ?? '?', exit, output: this.output });
      return exit;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Waits until this instance has answered `count` more requests to the API than it had when called:
   * the balancer has put it (back) in rotation.
   */
  async inRotation(count = 5): Promise<void> {
    const before = this.served;
    await until(() => this.served >= before + count, `${this.name} to answer requests through the balancer`, { timeoutMs: START_TIMEOUT_MS });
  }
}

/** What the operator tells the balancer around an instance's restart (balancers.ts). */
interface Rotation {
  takeOut(index: number, drains: boolean): Promise<void>;
  putBack(index: number): Promise<void>;
}

/**
 * Replaces each instance in turn with `release` (the same one: a rolling restart; a newer one: a rolling
 * upgrade), the way an operator's script does: out of the balancer's rotation where it needs telling, stop
 * (SIGTERM, which must end in exit 0), start, ready, back in rotation, next. `between` runs after each
 * instance is back, before the next is stopped.
 */
export async function roll(
  instances: readonly Instance[],
  release: Release,
  balancer: Rotation,
  between: (instance: Instance, index: number) => Promise<void> = async () => {},
): Promise<void> {
  for (const [index, instance] of instances.entries()) {
    await balancer.takeOut(index, instance.release?.drains ?? true);
    const exit = await instance.stop();
    if (exit.code !== 0) throw new Error(`${instance.name} exited ${JSON.stringify(exit)} after SIGTERM:\n${instance.log}`);
    await instance.start(release);
    await balancer.putBack(index);
    await instance.inRotation();
    await between(instance, index);
  }
}
