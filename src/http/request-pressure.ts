import type { Server } from 'node:http';
import { availableParallelism } from 'node:os';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { BatchCounts } from '../store/store.js';

/** Saturated from this share of the cores the process may use (all its threads together)… */
const CPU_HIGH = 0.9;
/** …until it falls below this (hysteresis: no flapping at the edge). */
const CPU_LOW = 0.8;
/** Saturated, too, from this share of the main thread (event-loop utilization)… */
const LOOP_HIGH = 0.9;
/** …until it falls below this. */
const LOOP_LOW = 0.75;
/** Where the database is a server of its own: saturated, too, from this many writes per batch over a window… */
const QUEUE_HIGH = 12;
/** …until there are fewer than this. */
const QUEUE_LOW = 6;
const WINDOW_MS = 100;
/**
 * While deliveries run, a window that reads saturated is judged by the requests' own cost, measured in the
 * last window the gate was closed, if that is at most this many windows old; else the gate closes for a
 * window, which measures it again.
 */
const COST_FRESH_WINDOWS = 10;

/**
 * One window's measure: the share of its cores the process used (0–1), the main thread's event-loop
 * utilization (0–1), and (a database server's writes) the writes per batch sent to it.
 */
export interface Load {
  cpu: number;
  loop: number;
  writesPerBatch?: number;
}

/**
 * Whether the request path is at capacity: in the last window requests were served while the process
 * used nearly all the CPU it may (every thread: the main one, SQLite's writer, deliveries), or while the
 * main thread, which serves every request, was nearly always busy. Background work (webhook deliveries)
 * yields while it is, so that it never takes throughput from requests, and catches up as soon as it is not.
 *
 * The CPU, not how many writes wait for each commit: with group commit a commit gathers more writes the
 * faster they come, whether or not the core has room (a dozen at a fifth of the maximum rate, when the
 * core was half idle, which closed the gate and left deliveries seconds behind). A saturated process on one
 * core shows about 92%, the rest the disk's waits, so CPU_HIGH is below that; deliveries at a fifth of the
 * maximum rate take the process to about 87%.
 *
 * The requests' share, not the whole process's: deliveries catching up fill whatever room the requests
 * leave, so a window with the gate open may read saturated because of the deliveries alone. Counted as
 * the requests' load, that flapped the gate: open one window (a burst of deliveries, the core full),
 * closed the next (the requests alone, with room); deliveries fell seconds behind at a fifth of the
 * maximum rate, and a drain after the load went at half speed with one request a window (bench/RESULTS.md,
 * 2026-11-30). So while the gate is closed (deliveries at a trickle) each window measures what a request
 * costs, and while it is open a window that reads saturated is judged by its requests times that cost; a
 * cost more than COST_FRESH_WINDOWS old is measured again by closing the gate for a window.
 *
 * Where the database is a server of its own (PostgreSQL), the writes' CPU is not the process's: there the
 * process may idle while the database is what writes wait for, which shows as writes gathering behind
 * each commit (a dozen or more a batch): given `writeBatches`, that counts too, judged the same way (the
 * deliveries' own statements slow the commits, and more writes gather behind each).
 */
export class RequestPressure {
  private requests = 0;
  private saturated = false;
  private loop: EventLoopUtilization = performance.eventLoopUtilization();
  private cpu = process.cpuUsage();
  private at = performance.now();
  private readonly cores = availableParallelism();
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: Array<() => void> = [];

  private batches = 0;
  private writes = 0;
  /** What one request cost (its share of each measure) in the last window the gate was closed, and how many windows ago. */
  private perRequest: Load | undefined;
  private costAge = 0;

  constructor(
    private readonly server: Server,
    /** The database server's write batches so far (Store.writeBatches), a live view; none where the writes are the process's own. */
    private readonly writeBatches?: Readonly<BatchCounts>,
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
    this.batches = this.writeBatches?.batches ?? 0;
    this.writes = this.writeBatches?.items ?? 0;
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
    const used = process.cpuUsage(this.cpu);
    this.cpu = process.cpuUsage();
    const now = performance.now();
    const windowUs = (now - this.at) * 1000;
    this.at = now;
    const load: Load = { cpu: (used.user + used.system) / (windowUs * this.cores), loop: loop.utilization };
    if (this.writeBatches === undefined) return load;
    const { batches, items } = this.writeBatches;
    load.writesPerBatch = batches > this.batches ? (items - this.writes) / (batches - this.batches) : 0;
    this.batches = batches;
    this.writes = items;
    return load;
  }

  /** Takes one window's measure and decides; run every WINDOW_MS once started. */
  sample(): void {
    const load = this.measure();
    const served = this.requests;
    this.requests = 0;
    this.costAge++;
    const wasSaturated = this.saturated;
    if (served === 0) this.saturated = false;
    else if (wasSaturated) {
      // Deliveries at a trickle: the window measures the requests (nearly) alone.
      this.perRequest = { cpu: load.cpu / served, loop: load.loop / served, writesPerBatch: (load.writesPerBatch ?? 0) / served };
      this.costAge = 0;
      if (below(load)) this.saturated = false;
    } else if (above(load)) {
      // Saturated by the requests, or by deliveries filling the room they leave: judged by the requests' cost.
      const cost = this.costAge <= COST_FRESH_WINDOWS ? this.perRequest : undefined;
      this.saturated =
        cost === undefined || above({ cpu: cost.cpu * served, loop: cost.loop * served, writesPerBatch: (cost.writesPerBatch ?? 0) * served });
    }
    if (wasSaturated && !this.saturated) for (const listener of this.listeners) listener();
  }
}

function above({ cpu, loop, writesPerBatch = 0 }: Load): boolean {
  return cpu >= CPU_HIGH || loop >= LOOP_HIGH || writesPerBatch >= QUEUE_HIGH;
}

function below({ cpu, loop, writesPerBatch = 0 }: Load): boolean {
  return cpu < CPU_LOW && loop < LOOP_LOW && writesPerBatch < QUEUE_LOW;
}
