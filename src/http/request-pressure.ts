import type { Server } from 'node:http';
import { availableParallelism } from 'node:os';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** Saturated from this share of the main thread (event-loop utilization) or of the CPUs the process may use… */
const HIGH = 0.9;
/** …until it falls below this (hysteresis: no flapping at the edge). */
const LOW = 0.75;
const WINDOW_MS = 100;

/**
 * Whether the request path is using all the CPU it can get: in the last window requests were served
 * while the main thread's event loop, or the process's CPU over all its threads (the SQLite writer thread
 * included), was nearly full. Background work (webhook deliveries) yields while it is, so that it never
 * takes throughput from requests, and catches up as soon as it is not.
 */
export class RequestPressure {
  private requests = 0;
  private saturated = false;
  private loop: EventLoopUtilization = performance.eventLoopUtilization();
  private cpu = process.cpuUsage();
  private at = performance.now();
  private timer: NodeJS.Timeout | undefined;
  private readonly cores = availableParallelism();
  private readonly listeners: Array<() => void> = [];

  constructor(
    private readonly server: Server,
    /** The load of the last window, 0–1 (the busier of the event loop and the CPUs); measured unless given (tests). */
    private readonly measure: () => number = () => this.measureLoad(),
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

  private measureLoad(): number {
    const loop = performance.eventLoopUtilization(this.loop);
    this.loop = performance.eventLoopUtilization();
    const cpu = process.cpuUsage(this.cpu);
    this.cpu = process.cpuUsage();
    const now = performance.now();
    const cpuShare = (cpu.user + cpu.system) / 1000 / ((now - this.at) * this.cores);
    this.at = now;
    return Math.max(loop.utilization, cpuShare);
  }

  /** Takes one window's measure and decides; run every WINDOW_MS once started. */
  sample(): void {
    const load = this.measure();
    const wasSaturated = this.saturated;
    if (this.requests === 0) this.saturated = false;
    else if (load >= HIGH) this.saturated = true;
    else if (load < LOW) this.saturated = false;
    this.requests = 0;
    if (wasSaturated && !this.saturated) for (const listener of this.listeners) listener();
  }
}
