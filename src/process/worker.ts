import cluster, { type Worker } from 'node:cluster';
import { existsSync } from 'node:fs';
import type { RateCounts } from '../http/rate-limit.js';
import type { SupervisorRateCounts } from './rate-counts.js';
import { answeredMetrics, isOurs, WORKER_ENV, type SupervisorMessage, type WorkerMessage, type WorkerRole } from './protocol.js';

/** One worker process as its supervisor sees it (process/workers.ts keeps them all). */

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Stopped by the stop asked of it (SIGTERM or SIGINT before its handler was installed: nothing was in flight), or exited 0. */
export function clean(exit: Exit): boolean {
  return (exit.code === 0 && exit.signal === null) || exit.signal === 'SIGTERM' || exit.signal === 'SIGINT';
}

export function described(exit: Exit): string {
  return exit.signal !== null ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
}

/** The versions the workers run, for the log. */
export function versions(members: Iterable<WorkerProcess | undefined>): string {
  return [...new Set([...members].flatMap((member) => (member?.version ? [member.version] : [])))].join(', ') || 'unknown';
}

/** A start that failed: `said` when the worker itself said why on stderr. */
export class StartFailed extends Error {
  constructor(
    message: string,
    readonly said: boolean,
  ) {
    super(message);
    this.name = 'StartFailed';
  }
}

/** The folder the supervisor was started in, by its path. */
const STARTED_IN = process.cwd();

/**
 * The folder a worker starts in: the supervisor's, by its path, as it is now. A deploy that replaced the
 * install folder (the new release moved into place, the old deleted) left the supervisor in the deleted
 * one, and a worker forked there started, said ready and refused every write: its SQLite writer thread
 * cannot start without a working folder (uv_cwd). A worker follows the path to the folder there now, as
 * a restart would, and runs the code it holds (the supervisor forks the entry point by its path too).
 * Gone altogether: the supervisor's own, and the worker says why it cannot start (process/serving.ts).
 */
function workingFolder(): string | undefined {
  return existsSync(STARTED_IN) ? STARTED_IN : undefined;
}

/** How long after a worker's exit its channel may take to close (its last messages read) before the exit is taken as it is. */
const DISCONNECT_GRACE_MS = 1000;

export class WorkerProcess {
  private readonly worker: Worker;
  state: 'starting' | 'serving' | 'leaving' = 'starting';
  /** Its version, from its ready message. */
  version: string | undefined;
  /** Why its start failed, as it said before exiting. */
  failure: string | undefined;
  /** True once it serves; false when it exited first. */
  readonly ready: Promise<boolean>;
  /** Its exit, once every message it sent has been read. */
  readonly exited: Promise<Exit>;
  /** The metrics requests it has not answered yet, by request number. */
  private readonly asked = new Map<number, (metrics: unknown[]) => void>();

  /** The forget-token requests it has not answered yet, by request number. */
  private readonly forgetting = new Map<number, () => void>();
  private forgetRequests = 0;

  /**
   * Forks a worker for `role`; `handingOver` is given the rate-limit counts it sends as it hands over,
   * `countRates` counts the requests it asks to count (role.countsRates: process/rate-counts.ts), and
   * `revoked` tells the other workers of a token it revoked (role.relaysRevocations: process/revocations.ts).
   */
  constructor(
    readonly role: WorkerRole,
    handingOver: (counts: RateCounts) => void,
    { countRates, revoked }: { countRates?: Pick<SupervisorRateCounts, 'hit'> | undefined; revoked?: (tokenId: string) => Promise<void> } = {},
  ) {
    cluster.setupPrimary({ cwd: workingFolder() });
    this.worker = cluster.fork({ [WORKER_ENV]: JSON.stringify(role) });
    let readied: (ready: boolean) => void = () => undefined;
    this.ready = new Promise<boolean>((resolve) => (readied = resolve));
    // The exit, and the channel closed: every message the worker sent before exiting has been read by then.
    // But not waited for long: Node emits no 'disconnect' for a worker that died while a connection was
    // being handed to it (cluster's round robin, several workers), and a supervisor that waited for it
    // never saw the crash: no worker replaced, no listener, the main process alive (systemd none the wiser).
    const disconnected = new Promise<void>((resolve) => this.worker.once('disconnect', resolve));
    this.exited = new Promise<Exit>((resolve) =>
      this.worker.once('exit', (code: number | null, signal: NodeJS.Signals | null) => {
        const exit = { code, signal };
        const grace = setTimeout(() => resolve(exit), DISCONNECT_GRACE_MS);
        void disconnected.then(() => {
          clearTimeout(grace);
          resolve(exit);
        });
      }),
    );
    this.worker.on('message', (message: unknown) => {
      if (!isOurs<WorkerMessage>(message)) return;
      if (message.plantStore === 'ready') {
        this.state = 'serving';
        this.version = message.version;
        readied(true);
      } else if (message.plantStore === 'metrics') this.asked.get(message.request)?.(answeredMetrics(message));
      else if (message.plantStore === 'failed') this.failure = message.message;
      else if (message.plantStore === 'rate-counts') handingOver(message.counts);
      else if (message.plantStore === 'rate-hits' && countRates && Array.isArray(message.keys))
        this.send({ plantStore: 'rate-hits', request: message.request, counts: countRates.hit(message.window, message.keys) });
      else if (message.plantStore === 'token-revoked' && revoked && typeof message.tokenId === 'string') {
        const { request } = message;
        void revoked(message.tokenId).then(() => this.send({ plantStore: 'token-revoked', request }));
      } else if (message.plantStore === 'token-forgotten') this.forgetting.get(message.request)?.();
    });
    void this.exited.then(() => {
      readied(false);
      for (const answer of this.asked.values()) answer([]);
      for (const forgotten of this.forgetting.values()) forgotten();
    });
  }

  get pid(): number | undefined {
    return this.worker.process.pid;
  }

  /**
   * Sends `message`, unless the worker's channel has closed: `unsent` is called then. A worker that leaves
   * (it stopped, or stops after a reload) disconnects before the supervisor hears of its exit, and Node
   * reports a message sent on a closed channel as an 'error' event on the worker, which ended the supervisor,
   * and with it the service: a metrics scrape during a reload did, in CI.
   */
  send(message: SupervisorMessage, unsent?: () => void): void {
    if (!this.worker.isConnected()) {
      unsent?.();
      return;
    }
    this.worker.send(message, (error: Error | null) => {
      if (error) unsent?.();
    });
  }

  /** Its exit, when it exits within `ms`; undefined when it still runs then. */
  async exitWithin(ms: number): Promise<Exit | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const running = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
    try {
      return await Promise.race([this.exited, running]);
    } finally {
      clearTimeout(timer);
    }
  }

  kill(signal: NodeJS.Signals): void {
    this.worker.process.kill(signal);
  }

  /** Its registry's metrics (METRICS_PORT), answered to request number `request`; none once it has exited. */
  metrics(request: number): Promise<unknown[]> {
    return new Promise<unknown[]>((resolve) => {
      this.asked.set(request, (metrics) => {
        this.asked.delete(request);
        resolve(metrics);
      });
      // A worker that cannot be asked any more answers nothing, as one that has exited.
      this.send({ plantStore: 'metrics', request }, () => this.asked.get(request)?.([]));
    });
  }

  /** Has it forget a token another worker revoked: resolves once it has, or cannot any more (its channel closed, or it exited). */
  forgetToken(tokenId: string): Promise<void> {
    return new Promise<void>((resolve) => {
      const request = ++this.forgetRequests;
      this.forgetting.set(request, () => {
        this.forgetting.delete(request);
        resolve();
      });
      this.send({ plantStore: 'forget-token', request, tokenId }, () => this.forgetting.get(request)?.());
    });
  }

  /** Forgets a request it has not answered (the scrape gave up). */
  forget(request: number): void {
    this.asked.delete(request);
  }
}
