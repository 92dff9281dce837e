import type { Server } from 'node:http';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** Saturated from this share of the main thread (event-loop utilization)… */
const LOOP_HIGH = 0.9;
/** …until it falls below this (hysteresis: no flapping at the edge). */
const LOOP_LOW = 0.75;
const WINDOW_MS = 100;

/** One window's measure: the main thread's event-loop utilization (0–1). */
export interface Load {
  loop: number;
}

/**
 * Whether the request path is at capacity: in the last window requests were served while the main
 * thread's event loop was nearly full (requests waited for it). Background work (webhook deliveries)
 * yields while it is, so that it never takes throughput from requests, and catches up as soon as it is not.
 *
 * The main thread alone: it serves every request, and deliveries are sent from a thread of their own
 * (webhooks/delivery-thread.ts), so its busy share is the requests' (and what little of a delivery stays:
 * claiming and recording). On one core a delivery thread that takes the CPU keeps the main thread waiting
 * with requests in hand, which shows as a full loop; on two it runs beside. How many writes gather behind
 * each commit is no measure of it: at a fifth of the maximum rate a commit gathers a dozen, with the core
 * far from full, and deliveries gated by it fell seconds behind.
 */
export class RequestPressure {
  private requests = 0;
  private saturated = false;
  private loop: EventLoopUtilization = performance.eventLoopUtilization();
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: Array<() => void> = [];

  constructor(
    private readonly server: Server,
    /** The load of the last window; measured unless given (tests). */
    private readonly measure: () => Load = () => this.measureLoad(),
  ) {}

  /** True while the request path is saturated. */
  get high(): boolean {
    return this.saturated;
  }

  /** Calls `listener` when the pressure falls. */
  onRelief(listener: () => void): void {
    this.listeners.push(listener);
  }

  start(): void {
    this.server.on('request', this.count);
    this.timer = setInterval(() => this.sample(), WINDOW_MS).unref();
  }

  stop(): void {
    this.server.off('request', this.count);
    clearInterval(this.timer);
  }

  private readonly count = (): void => {
    this.requests++;
  };

  private measureLoad(): Load {
    const loop = performance.eventLoopUtilization(this.loop);
    this.loop = performance.eventLoopUtilization();
    return { loop: loop.utilization };
  }

  /** Takes one window's measure and decides; run every WINDOW_MS once started. */
  sample(): void {
    const { loop } = this.measure();
    const wasSaturated = this.saturated;
    if (this.requests === 0) this.saturated = false;
    else if (loop >= LOOP_HIGH) this.saturated = true;
    else if (loop < LOOP_LOW) this.saturated = false;
    this.requests = 0;
    if (wasSaturated && !this.saturated) for (const listener of this.listeners) listener();
  }
}
