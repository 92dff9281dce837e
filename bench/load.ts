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

/** What the connections alongside the measured workload were answered in its measured window. */
export interface AlongsideResult {
  connections: number;
  requests: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
}

export interface LoadResult {
  requests: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
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
  const sockets = new Set<Socket>();
  let stopping = false;
  const open = (): void => {
    const socket = connect({ port: options.port, host: '127.0.0.1', noDelay: true });
    sockets.add(socket);
    let pending: Buffer | undefined;
    let sentAt = 0;
    let inFlight = false;
    const send = (): void => {
      if (stopping) {
        socket.destroy();
        return;
      }
      inFlight = true;
      sentAt = performance.now();
      socket.write(next());
    };
    socket.on('connect', send);
    socket.on('data', (chunk: Buffer) => {
      pending = pending === undefined ? chunk : Buffer.concat([pending, chunk]);
      const response = parseResponse(pending);
      if (!response) return;
      pending = response.length < pending.length ? pending.subarray(response.length) : undefined;
      inFlight = false;
      answers.push([monotonicUs(), performance.now() - sentAt, response.status >= 200 && response.status <= 299]);
      send();
    });
    socket.on('error', () => failures.push(monotonicUs()));
    socket.on('close', () => {
      sockets.delete(socket);
      if (inFlight && !stopping) failures.push(monotonicUs());
      if (!stopping) setTimeout(open, 10);
    });
  };
  for (let i = 0; i < connections; i++) open();
  return {
    finish([start, end]: [number, number]): AlongsideResult {
      stopping = true;
      for (const socket of sockets) socket.destroy();
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

function runClosedLoop(options: LoadOptions): Promise<LoadResult> {
  const next = requestSource(options.workload, options.token);
  const latencies: number[] = [];
  let errors = 0;
  let non2xx = 0;
  let firstNon2xx: number | undefined;
  let measuring = false;
  let stopping = false;
  let measuredStart = 0;
  let measuredEnd = 0;
  let windowStartUs = 0;
  let cpuStart = process.cpuUsage();
  let serverCpuStart: number | undefined;
  let serverMainCpuStart: number | undefined;
  const serverCpu = (mainThread = false) => (options.serverPid === undefined ? undefined : cpuSeconds(options.serverPid, mainThread));
  const sockets = new Set<Socket>();

  const open = (): void => {
    const socket = connect({ port: options.port, host: '127.0.0.1', noDelay: true });
    sockets.add(socket);
    let pending: Buffer | undefined;
    let sentAt = 0;
    let inFlight = false;
    const send = (): void => {
      if (stopping) {
        socket.destroy();
        return;
      }
      inFlight = true;
      sentAt = performance.now();
      socket.write(next());
    };
    socket.on('connect', send);
    socket.on('data', (chunk: Buffer) => {
      pending = pending === undefined ? chunk : Buffer.concat([pending, chunk]);
      const response = parseResponse(pending);
      if (!response) return;
      pending = response.length < pending.length ? pending.subarray(response.length) : undefined;
      inFlight = false;
      if (measuring) {
        latencies.push(performance.now() - sentAt);
        if (response.status < 200 || response.status > 299) {
          non2xx++;
          firstNon2xx ??= response.status;
        }
      }
      send();
    });
    socket.on('error', () => {
      if (measuring) errors++;
    });
    socket.on('close', () => {
      sockets.delete(socket);
      if (inFlight && measuring) errors++;
      // A connection the server closed is replaced, as a real client's pool would.
      if (!stopping) setTimeout(open, 10);
    });
  };

  for (let i = 0; i < options.connections; i++) open();

  return new Promise((resolve) => {
    setTimeout(() => {
      measuring = true;
      measuredStart = performance.now();
      windowStartUs = monotonicUs();
      cpuStart = process.cpuUsage();
      serverCpuStart = serverCpu();
      serverMainCpuStart = serverCpu(true);
      setTimeout(() => {
        measuring = false;
        stopping = true;
        measuredEnd = performance.now();
        const windowEndUs = monotonicUs();
        const cpu = process.cpuUsage(cpuStart);
        const serverCpuEnd = serverCpu();
        const serverMainCpuEnd = serverCpu(true);
        for (const socket of sockets) socket.destroy();
        const seconds = (measuredEnd - measuredStart) / 1000;
        latencies.sort((a, b) => a - b);
        const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
        resolve({
          requests: latencies.length,
          reqPerSec: latencies.length / seconds,
          p50Ms: at(0.5),
          p99Ms: at(0.99),
          errors,
          non2xx,
          clientCpu: (cpu.user + cpu.system) / 1e6 / seconds,
          ...(serverCpuStart === undefined || serverCpuEnd === undefined ? {} : { serverCpu: (serverCpuEnd - serverCpuStart) / seconds }),
          ...(serverMainCpuStart === undefined || serverMainCpuEnd === undefined
            ? {}
            : { serverMainCpu: (serverMainCpuEnd - serverMainCpuStart) / seconds }),
          ...(firstNon2xx === undefined ? {} : { firstNon2xx }),
          windowUs: [windowStartUs, windowEndUs],
        });
      }, options.durationMs);
    }, options.warmupMs);
  });
}

/**
 * The open loop: request i is due at start + i / rate and goes out on the first idle connection (one request
 * in flight per connection, up to `connections`); while none is idle, due requests wait in a backlog, and
 * their latency still counts from when they were due (no coordinated omission: a stalled server shows as
 * latency, not as a lower rate asked for).
 */
function runPaced(options: LoadOptions, rate: number): Promise<LoadResult> {
  const next = requestSource(options.workload, options.token);
  const latencies: number[] = [];
  const idle: Array<(dueAt: number) => void> = [];
  /** Due times of requests waiting for a connection. */
  const backlog: number[] = [];
  let backlogHead = 0;
  let maxBacklog = 0;
  let scheduled = 0;
  let acknowledged = 0;
  let errors = 0;
  let non2xx = 0;
  let firstNon2xx: number | undefined;
  let measuring = false;
  let stopping = false;
  const sockets = new Set<Socket>();
  const started = performance.now();
  const serverCpu = (mainThread = false) => (options.serverPid === undefined ? undefined : cpuSeconds(options.serverPid, mainThread));

  const pump = (): void => {
    while (backlogHead < backlog.length && idle.length > 0) idle.pop()!(backlog[backlogHead++]!);
    if (backlogHead > 4096 && backlogHead * 2 > backlog.length) {
      backlog.splice(0, backlogHead);
      backlogHead = 0;
    }
  };

  const open = (): void => {
    const socket = connect({ port: options.port, host: '127.0.0.1', noDelay: true });
    sockets.add(socket);
    let pending: Buffer | undefined;
    let dueAt = 0;
    let inFlight = false;
    const send = (at: number): void => {
      inFlight = true;
      dueAt = at;
      socket.write(next());
    };
    const ready = (): void => {
      if (stopping) {
        socket.destroy();
        return;
      }
      idle.push(send);
      pump();
    };
    socket.on('connect', ready);
    socket.on('data', (chunk: Buffer) => {
      pending = pending === undefined ? chunk : Buffer.concat([pending, chunk]);
      const response = parseResponse(pending);
      if (!response) return;
      pending = response.length < pending.length ? pending.subarray(response.length) : undefined;
      inFlight = false;
      const ok = response.status >= 200 && response.status <= 299;
      if (ok) acknowledged++;
      if (measuring) {
        latencies.push(performance.now() - dueAt);
        if (!ok) {
          non2xx++;
          firstNon2xx ??= response.status;
        }
      }
      ready();
    });
    socket.on('error', () => {
      if (measuring) errors++;
    });
    socket.on('close', () => {
      sockets.delete(socket);
      if (inFlight && measuring) errors++;
      if (!stopping) setTimeout(open, 10);
    });
  };

  for (let i = 0; i < options.connections; i++) open();
  // Every millisecond, the requests that fell due since the last tick join the backlog.
  const ticker = setInterval(() => {
    const due = Math.floor(((performance.now() - started) * rate) / 1000);
    for (; scheduled < due; scheduled++) backlog.push(started + (scheduled * 1000) / rate);
    maxBacklog = Math.max(maxBacklog, backlog.length - backlogHead);
    pump();
  }, 1);

  return new Promise((resolve) => {
    setTimeout(() => {
      measuring = true;
      const measuredStart = performance.now();
      const windowStartUs = monotonicUs();
      const cpuStart = process.cpuUsage();
      const serverCpuStart = serverCpu();
      const serverMainCpuStart = serverCpu(true);
      setTimeout(() => {
        measuring = false;
        stopping = true;
        clearInterval(ticker);
        const seconds = (performance.now() - measuredStart) / 1000;
        const windowEndUs = monotonicUs();
        const cpu = process.cpuUsage(cpuStart);
        const [serverCpuEnd, serverMainCpuEnd] = [serverCpu(), serverCpu(true)];
        for (const socket of sockets) socket.destroy();
        latencies.sort((a, b) => a - b);
        resolve({
          requests: latencies.length,
          reqPerSec: latencies.length / seconds,
          p50Ms: quantile(latencies, 0.5),
          p99Ms: quantile(latencies, 0.99),
          errors,
          non2xx,
          clientCpu: (cpu.user + cpu.system) / 1e6 / seconds,
          ...(serverCpuStart === undefined || serverCpuEnd === undefined ? {} : { serverCpu: (serverCpuEnd - serverCpuStart) / seconds }),
          ...(serverMainCpuStart === undefined || serverMainCpuEnd === undefined
            ? {}
            : { serverMainCpu: (serverMainCpuEnd - serverMainCpuStart) / seconds }),
          ...(firstNon2xx === undefined ? {} : { firstNon2xx }),
          windowUs: [windowStartUs, windowEndUs],
          paced: { rate, acknowledged, maxBacklog },
        });
      }, options.durationMs);
    }, options.warmupMs);
  });
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
