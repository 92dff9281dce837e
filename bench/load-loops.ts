import { performance } from 'node:perf_hooks';
import { connectionPool } from './load-pool.js';
import { cpuSeconds } from './proc.js';
import { requestSource, type Workload } from './requests.js';

/**
 * What the load generator is asked and answers, and its closed loop: each connection sends its next request
 * the moment its last answer came (the open loop is in load-paced.ts). The measured window follows a warm-up.
 */

export interface LoadOptions {
  port: number;
  connections: number;
  warmupMs: number;
  durationMs: number;
  token: string;
  workload: Workload;
  /** The server's pid, to read its CPU use over exactly the measured window. */
  serverPid?: number;
  /**
   * Open loop: requests per second sent on a fixed schedule, whatever the answers do , over
   * up to `connections` connections; latency counts from each request's scheduled time. Unset: closed loop.
   */
  rate?: number;
  /**
   * Closed-loop connections of another workload, running beside the measured one from its start to its end
   * (the writes under which reads are measured): their answers are counted apart, in `alongside`.
   */
  alongside?: { workload: Workload; connections: number };
}

/** The answers of the measured window: how many, how fast, and how many went wrong (no answer, or not 2xx). */
interface AnswerStats {
  requests: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
}

/** What the connections alongside the measured workload were answered in its measured window. */
export interface AlongsideResult extends AnswerStats {
  connections: number;
  /** Share of one CPU their process used over its run (bench/load-beside.ts), when they run in one of their own. */
  clientCpu?: number;
}

export interface LoadResult extends AnswerStats {
  /** Share of one CPU the client used during the measured window (1 = a whole core). */
  clientCpu: number;
  /** Share of one CPU the server used during the measured window, when its pid was given. */
  serverCpu?: number;
  /** The same for its main thread alone (the rest: the SQLite writer thread, V8's and libuv's helpers). */
  serverMainCpu?: number;
  /** The first non-2xx status seen, for the report. */
  firstNon2xx?: number;
  /** The measured window on the monotonic clock, in µs (the clock of V8's CPU profiles: bench/stages.ts cuts them to it). */
  windowUs: [start: number, end: number];
  /** Open loop only: the rate asked for, and the 2xx answers of the whole run, warm-up included (each an acknowledged write). */
  paced?: { rate: number; acknowledged: number; maxBacklog: number };
  alongside?: AlongsideResult;
}

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/** The latencies' percentile q (0–1) of a sorted list. */
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

/**
 * Closed-loop connections of another workload (one request in flight each), from now until finish(): each
 * answer is kept with the monotonic time it came at, and those of the measured window are counted.
 */
export function runAlongside(options: LoadOptions, { workload, connections }: NonNullable<LoadOptions['alongside']>) {
  const next = requestSource(workload, options.token);
  const answers: Array<[atUs: number, latencyMs: number, ok: boolean]> = [];
  const failures: number[] = [];
  const pool = connectionPool(options.port, connections, next, {
    ready: (send) => send(performance.now()),
    answered: (status, latencyMs) => answers.push([monotonicUs(), latencyMs, status >= 200 && status <= 299]),
    failed: () => failures.push(monotonicUs()),
  });
  return {
    finish([start, end]: [number, number]): AlongsideResult {
      pool.stop();
      const within = answers.filter(([at]) => at >= start && at <= end);
      const latencies = within.map(([, latency]) => latency).sort((a, b) => a - b);
      return {
        connections,
        requests: within.length,
        reqPerSec: within.length / ((end - start) / 1e6),
        p50Ms: quantile(latencies, 0.5),
        p99Ms: quantile(latencies, 0.99),
        errors: failures.filter((at) => at >= start && at <= end).length,
        non2xx: within.filter(([, , ok]) => !ok).length,
      };
    },
  };
}

/** The measured window: its length, on the monotonic clock too, and the client's and the server's CPU use over it. */
interface Window extends Pick<LoadResult, 'clientCpu' | 'serverCpu' | 'serverMainCpu' | 'windowUs'> {
  seconds: number;
}

/** Waits out the warm-up, calls begin(), and `durationMs` later end(); resolves with the window measured between the two. */
export function measureWindow(options: LoadOptions, begin: () => void, end: () => void): Promise<Window> {
  const serverCpu = (mainThread = false) => (options.serverPid === undefined ? undefined : cpuSeconds(options.serverPid, mainThread));
  return new Promise((resolve) => {
    setTimeout(() => {
      begin();
      const measuredStart = performance.now();
      const windowStartUs = monotonicUs();
      const cpuStart = process.cpuUsage();
      const serverCpuStart = serverCpu();
      const serverMainCpuStart = serverCpu(true);
      setTimeout(() => {
        const seconds = (performance.now() - measuredStart) / 1000;
        const windowEndUs = monotonicUs();
        const cpu = process.cpuUsage(cpuStart);
        const [serverCpuEnd, serverMainCpuEnd] = [serverCpu(), serverCpu(true)];
        end();
        resolve({
          seconds,
          clientCpu: (cpu.user + cpu.system) / 1e6 / seconds,
          ...(serverCpuStart === undefined || serverCpuEnd === undefined ? {} : { serverCpu: (serverCpuEnd - serverCpuStart) / seconds }),
          ...(serverMainCpuStart === undefined || serverMainCpuEnd === undefined
            ? {}
            : { serverMainCpu: (serverMainCpuEnd - serverMainCpuStart) / seconds }),
          windowUs: [windowStartUs, windowEndUs],
        });
      }, options.durationMs);
    }, options.warmupMs);
  });
}

/** What a loop counts of the measured window's answers. */
export interface Counts {
  latencies: number[];
  errors: number;
  non2xx: number;
  firstNon2xx?: number;
}

export const noCounts = (): Counts => ({ latencies: [], errors: 0, non2xx: 0 });

export function countAnswer(counts: Counts, status: number, latencyMs: number): void {
  counts.latencies.push(latencyMs);
  if (status < 200 || status > 299) {
    counts.non2xx++;
    counts.firstNon2xx ??= status;
  }
}

export function loadResult({ latencies, errors, non2xx, firstNon2xx }: Counts, { seconds, windowUs, ...cpu }: Window): LoadResult {
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    reqPerSec: latencies.length / seconds,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    errors,
    non2xx,
    ...cpu,
    ...(firstNon2xx === undefined ? {} : { firstNon2xx }),
    windowUs,
  };
}

export async function runClosedLoop(options: LoadOptions): Promise<LoadResult> {
  const counts = noCounts();
  let measuring = false;
  const pool = connectionPool(options.port, options.connections, requestSource(options.workload, options.token), {
    ready: (send) => send(performance.now()),
    answered: (status, latencyMs) => {
      if (measuring) countAnswer(counts, status, latencyMs);
    },
    failed: () => {
      if (measuring) counts.errors++;
    },
  });
  const window = await measureWindow(
    options,
    () => (measuring = true),
    () => {
      measuring = false;
      pool.stop();
    },
  );
  return loadResult(counts, window);
}
