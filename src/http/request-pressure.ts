import type { Server } from 'node:http';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { BatchCounts } from '../store/store.js';

/** Saturated from this share of the main thread (event-loop utilization)… */
const LOOP_HIGH = 0.9;
/** …until it falls below this (hysteresis: no flapping at the edge). */
const LOOP_LOW = 0.75;
/** Saturated from this many writes per batch over a window (writes queue up behind the batch committing)… */
const QUEUE_HIGH = 12;
/** …until there are fewer than this. */
const QUEUE_LOW = 6;
const WINDOW_MS = 100;

/** One window's measure: the event loop's utilization (0–1) and the writes per batch sent to the database. */
export interface Load {
  loop: number;
  writesPerBatch: number;
}

/**
 * Whether the request path is at capacity: in the last window requests were served while the main
 * thread's event loop was nearly full, or while writes queued up for the database (many writes gathered
 * behind each batch committing: the database, or its writer thread, is what they wait for). Background
 * work (webhook deliveries) yields while it is, so that it never takes throughput from requests, and
 * catches up as soon as it is not.
 *
 * The queue rather than the CPU: at half the maximum write rate the CPU is still nearly as busy as at the
 * maximum (smaller batches cost more per write), yet writes hardly wait; and the database's own CPU (the
 * writer thread, or the PostgreSQL server) says nothing of whether requests could go faster.
 */
export class RequestPressure {
  private requests = 0;
  private saturated = false;
  private loop: EventLoopUtilization = performance.eventLoopUtilization();
  private batches = 0;
  private writes = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: Array<() => void> = [];

  constructor(
    private readonly server: Server,
    /** The store's write batches so far (Store.writeBatches), a live view. */
    private readonly writeBatches: Readonly<BatchCounts>,
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
    this.batches = this.writeBatches.batches;
    this.writes = this.writeBatches.items;
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
    const { batches, items } = this.writeBatches;
    const writesPerBatch = batches > this.batches ? (items - this.writes) / (batches - this.batches) : 0;
    this.batches = batches;
    this.writes = items;
    return { loop: loop.utilization, writesPerBatch };
  }

  /** Takes one window's measure and decides; run every WINDOW_MS once started. */
  sample(): void {
    const { loop, writesPerBatch } = this.measure();
    const wasSaturated = this.saturated;
    if (this.requests === 0) this.saturated = false;
    else if (loop >= LOOP_HIGH || writesPerBatch >= QUEUE_HIGH) this.saturated = true;
    else if (loop < LOOP_LOW && writesPerBatch < QUEUE_LOW) this.saturated = false;
    this.requests = 0;
    if (wasSaturated && !this.saturated) for (const listener of this.listeners) listener();
  }
}
