import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config/config.js';
import { HttpError } from './errors.js';

export type OverloadSettings = Pick<Config, 'overloadEventLoopDelayMs' | 'overloadHeapUsedMb'>;

export interface LoadSample {
  /** Mean event-loop delay over the last window, in ms. */
  eventLoopDelayMs: number;
  heapUsedMb: number;
}

/** How often the load is sampled; each sample covers the window since the previous one. */
const SAMPLE_EVERY_MS = 500;
/** Samples in a row over the delay limit before shedding starts. */
const LAGGING_SAMPLES = 2;
/** The histogram's timer period; its mean delay includes it, so it is taken off. */
const RESOLUTION_MS = 10;
/**
 * How long without a request stops the histogram: longer than a load balancer's or an orchestrator's
 * health checks are apart (HAProxy's 2 s, Kubernetes' 10 s), so that /readyz, which they read, keeps
 * telling a lagging process out of rotation between their checks.
 */
const QUIET_MS = 30_000;
const RETRY_AFTER_SECONDS = '2';

/**
 * Load shedding. Every half second the monitor reads the event loop's mean delay (perf_hooks) and the
 * JS heap in use; while either is over its threshold (the delay in two windows in a row), every request but those of routes marked `servesWhenOverloaded` (/healthz) is answered 503 with
 * Retry-After at once, before authentication or body parsing, so the process spends nothing on work it
 * cannot finish in time and lets the loop and the heap recover. /healthz stays cheap and answers: the
 * process is up, just busy (readyz reports the overload as 503, which takes the instance out of a
 * balancer's rotation).
 *
 * The delay histogram runs a timer every RESOLUTION_MS, a hundred wake-ups a second. It runs only while
 * requests come: QUIET_MS without one stops it, and the next request starts it again. An idle process thus
 * sleeps (each wake-up costs CPU, and on a host of many idle instances, all of theirs); a loop that lags
 * with no request coming, not even a health check, has nothing to shed.
 */
export class OverloadMonitor {
  private histogram: IntervalHistogram | undefined;
  /** Whether the histogram runs (a request came within QUIET_MS) or sleeps. */
  private watching = false;
  /** Whether a request came since the last sample. */
  private seen = false;
  /** Samples in a row without a request. */
  private quietSamples = 0;
  /** Samples in a row whose loop delay was over the limit. */
  private laggingSamples = 0;
  private timer: NodeJS.Timeout | undefined;
  private reason: string | undefined;
  private readonly heapLimitMb: number;
  private readonly loopLimitMs: number;

  constructor(
    settings: OverloadSettings,
    /** Told when shedding starts (with the reason) and stops (undefined): one log line per change, not per request. */
    private readonly onChange: (reason: string | undefined) => void = () => undefined,
    private readonly measure?: () => LoadSample,
  ) {
    this.loopLimitMs = settings.overloadEventLoopDelayMs;
    this.heapLimitMb = settings.overloadHeapUsedMb;
  }

  start(): void {
    if (this.timer !== undefined) return;
    if (this.measure === undefined) this.histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.timer = setInterval(() => this.sample(), SAMPLE_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.histogram?.disable();
    this.watching = false;
  }

  /** Whether the event loop's delay is being measured: only while requests come (see above). */
  get watchingLoop(): boolean {
    return this.watching;
  }

  /** Why the service sheds load now, or undefined when it does not. */
  get overloaded(): string | undefined {
    return this.reason;
  }

  sample(): LoadSample {
    const before = this.reason;
    const load = this.measure?.() ?? this.read();
    this.quietSamples = this.seen ? 0 : this.quietSamples + 1;
    this.seen = false;
    if (this.watching && this.quietSamples * SAMPLE_EVERY_MS >= QUIET_MS) {
      this.histogram?.disable();
      this.watching = false;
    }
    this.laggingSamples = this.loopLimitMs > 0 && load.eventLoopDelayMs > this.loopLimitMs ? this.laggingSamples + 1 : 0;
    // Two windows in a row: a lag that lasts. One long turn (a first request's compiling, the OpenAPI
    // document made, a GC pause) fills one window's mean alone, and shed the requests after it for nothing:
    // a new worker's first requests in a reload, on a busy host.
    if (this.laggingSamples >= LAGGING_SAMPLES) {
      this.reason = `the event loop lags ${Math.round(load.eventLoopDelayMs)} ms (limit ${this.loopLimitMs} ms)`;
    } else if (load.heapUsedMb > this.heapLimitMb) {
      this.reason = `the heap holds ${Math.round(load.heapUsedMb)} MiB (limit ${Math.round(this.heapLimitMb)} MiB)`;
    } else this.reason = undefined;
    if ((this.reason === undefined) !== (before === undefined)) this.onChange(this.reason);
    return load;
  }

  private watch(): void {
    this.watching = this.timer !== undefined;
    if (this.watching) this.histogram?.enable();
  }

  private read(): LoadSample {
    const histogram = this.histogram!;
    const mean = Number.isNaN(histogram.mean) ? 0 : histogram.mean / 1e6;
    histogram.reset();
    return { eventLoopDelayMs: Math.max(0, mean - RESOLUTION_MS), heapUsedMb: process.memoryUsage().heapUsed / 2 ** 20 };
  }

  /** The 503 this request gets while shedding, or undefined: checked in onRequest, before authentication. */
  refusal(request: FastifyRequest): HttpError | undefined {
    this.seen = true;
    if (!this.watching) this.watch();
    const reason = this.reason;
    if (reason === undefined || request.routeOptions.config.servesWhenOverloaded === true) return undefined;
    return new HttpError('overloaded', `the service is overloaded (${reason}); retry in ${RETRY_AFTER_SECONDS} s`, {
      headers: { 'retry-after': RETRY_AFTER_SECONDS },
    });
  }
}
