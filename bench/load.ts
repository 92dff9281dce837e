import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { cpuSeconds } from './proc.js';
import { requestSource, type Workload } from './requests.js';

/**
 * The load generator, run as its own process (pinned to its own CPU by the runner): keep-alive raw
 * sockets, one request in flight per connection, pre-built requests. It prints one JSON line: the
 * result of the measured window (after a warm-up), including its own CPU use, so a saturated client
 * shows.
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

const CRLFCRLF = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = 'content-length:';

/** Parses the status and length of one HTTP/1.1 answer at the start of buffer; undefined until it is whole. */
function parseResponse(buffer: Buffer): { status: number; length: number } | undefined {
  const headEnd = buffer.indexOf(CRLFCRLF);
  if (headEnd === -1) return undefined;
  const head = buffer.toString('latin1', 0, headEnd).toLowerCase();
  const status = Number(head.slice(9, 12));
  const at = head.indexOf(CONTENT_LENGTH);
  let bodyLength = 0;
  if (at !== -1) {
    const end = head.indexOf('\r\n', at);
    bodyLength = Number(head.slice(at + CONTENT_LENGTH.length, end === -1 ? undefined : end).trim());
  } else if (head.includes('transfer-encoding: chunked')) {
    // Chunked answers end with a zero-size chunk: good enough for the small answers measured here.
    const end = buffer.indexOf('\r\n0\r\n\r\n', headEnd);
    if (end === -1) return undefined;
    return { status, length: end + 7 };
  }
  const length = headEnd + 4 + bodyLength;
  return buffer.length >= length ? { status, length } : undefined;
}

/** What a pool of connections tells the loop that drives it. */
interface ConnectionEvents {
  /** The connection can take a request (it connected, or its last answer came): send it now or later with send(since). */
  ready(send: (since: number) => void): void;
  /** An answer came, `latencyMs` after the `since` it was sent with. */
  answered(status: number, latencyMs: number): void;
  /** A socket error, or a connection closed with a request in flight before the pool was stopped. */
  failed(): void;
}

/**
 * `count` keep-alive raw connections to the server, one request in flight each (the next of `next`): a
 * connection the server closes is replaced after 10 ms, as a real client's pool would, until stop().
 */
function connectionPool(port: number, count: number, next: () => Buffer, events: ConnectionEvents): { stop(): void } {
  const sockets = new Set<Socket>();
  let stopping = false;
  const open = (): void => {
    const socket = connect({ port, host: '127.0.0.1', noDelay: true });
    sockets.add(socket);
    let pending: Buffer | undefined;
    let since = 0;
    let inFlight = false;
    const send = (at: number): void => {
      inFlight = true;
      since = at;
      socket.write(next());
    };
    const ready = (): void => {
      if (stopping) {
        socket.destroy();
        return;
      }
      events.ready(send);
    };
    socket.on('connect', ready);
    socket.on('data', (chunk: Buffer) => {
      pending = pending === undefined ? chunk : Buffer.concat([pending, chunk]);
      const response = parseResponse(pending);
      if (!response) return;
      pending = response.length < pending.length ? pending.subarray(response.length) : undefined;
      inFlight = false;
      events.answered(response.status, performance.now() - since);
      ready();
    });
    socket.on('error', () => events.failed());
    socket.on('close', () => {
      sockets.delete(socket);
      if (inFlight && !stopping) events.failed();
      if (!stopping) setTimeout(open, 10);
    });
  };
  for (let i = 0; i < count; i++) open();
  return {
    stop() {
      stopping = true;
      for (const socket of sockets) socket.destroy();
    },
  };
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const alongside = options.alongside === undefined ? undefined : runAlongside(options, options.alongside);
  const result = await (options.rate === undefined ? runClosedLoop(options) : runPaced(options, options.rate));
  return alongside === undefined ? result : { ...result, alongside: alongside.finish(result.windowUs) };
}

/**
 * Closed-loop connections of another workload (one request in flight each), from now until finish(): each
 * answer is kept with the monotonic time it came at, and those of the measured window are counted.
 */
function runAlongside(options: LoadOptions, { workload, connections }: NonNullable<LoadOptions['alongside']>) {
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
function measureWindow(options: LoadOptions, begin: () => void, end: () => void): Promise<Window> {
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
interface Counts {
  latencies: number[];
  errors: number;
  non2xx: number;
  firstNon2xx?: number;
}

const noCounts = (): Counts => ({ latencies: [], errors: 0, non2xx: 0 });

function countAnswer(counts: Counts, status: number, latencyMs: number): void {
  counts.latencies.push(latencyMs);
  if (status < 200 || status > 299) {
    counts.non2xx++;
    counts.firstNon2xx ??= status;
  }
}

function loadResult({ latencies, errors, non2xx, firstNon2xx }: Counts, { seconds, windowUs, ...cpu }: Window): LoadResult {
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

async function runClosedLoop(options: LoadOptions): Promise<LoadResult> {
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

/**
 * The open loop: request i is due at start + i / rate and goes out on the first idle connection (one request
 * in flight per connection, up to `connections`); while none is idle, due requests wait in a backlog, and
 * their latency still counts from when they were due (no coordinated omission: a stalled server shows as
 * latency, not as a lower rate asked for).
 */
async function runPaced(options: LoadOptions, rate: number): Promise<LoadResult> {
  const counts = noCounts();
  const idle: Array<(dueAt: number) => void> = [];
  /** Due times of requests waiting for a connection. */
  const backlog: number[] = [];
  let backlogHead = 0;
  let maxBacklog = 0;
  let scheduled = 0;
  let acknowledged = 0;
  let measuring = false;
  const started = performance.now();

  const pump = (): void => {
    while (backlogHead < backlog.length && idle.length > 0) idle.pop()!(backlog[backlogHead++]!);
    if (backlogHead > 4096 && backlogHead * 2 > backlog.length) {
      backlog.splice(0, backlogHead);
      backlogHead = 0;
    }
  };

  // A connection's latency counts from the time its request was due, not sent.
  const pool = connectionPool(options.port, options.connections, requestSource(options.workload, options.token), {
    ready: (send) => {
      idle.push(send);
      pump();
    },
    answered: (status, latencyMs) => {
      if (status >= 200 && status <= 299) acknowledged++;
      if (measuring) countAnswer(counts, status, latencyMs);
    },
    failed: () => {
      if (measuring) counts.errors++;
    },
  });
  // Every millisecond, the requests that fell due since the last tick join the backlog: request i is due at
  // i / rate, so i + 1 of them are by then (counting i alone sent each request one interval late, and that
  // interval was counted into its latency: 10 ms at 100 req/s, 2 ms at 500).
  const ticker = setInterval(() => {
    const due = Math.floor(((performance.now() - started) * rate) / 1000) + 1;
    for (; scheduled < due; scheduled++) backlog.push(started + (scheduled * 1000) / rate);
    maxBacklog = Math.max(maxBacklog, backlog.length - backlogHead);
    pump();
  }, 1);

  const window = await measureWindow(
    options,
    () => (measuring = true),
    () => {
      measuring = false;
      clearInterval(ticker);
      pool.stop();
    },
  );
  return { ...loadResult(counts, window), paced: { rate, acknowledged, maxBacklog } };
}

// Run as a process: the options as one JSON argument, the result as one JSON line on stdout.
if (process.argv[1]?.endsWith('/bench/load.js')) {
  const options = JSON.parse(process.argv[2] ?? '{}') as LoadOptions;
  runLoad(options).then(
    (result) => {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`load: ${String(error)}\n`);
      process.exit(1);
    },
  );
}
