import { AggregatorRegistry, Gauge } from 'prom-client';
import type { Scrape } from './server.js';

/**
 * Metrics of the supervisor's workers (process/workers.ts): each worker keeps its own registry, and the
 * supervisor, which serves no requests, owns the metrics listener. A scrape of it asks every worker that
 * serves for its registry as JSON (process/protocol.ts: not prom-client's own cluster messages, whose form
 * could change from one release's prom-client to the next, while a supervisor outlives releases), and
 * answers their sum, by prom-client's aggregation: counters and histograms added up, each default metric by
 * its own rule, the gauges read from the store (the webhook backlog, the backups') by their largest value.
 *
 * A worker leaves (a reload replaces it, or it dies and another starts in its place), and its counts must
 * not leave the sum with it: a sum that falls is a reset to Prometheus, which takes the counter to have
 * started again from 0, so `rate()` and `increase()` would count again everything the other workers had
 * counted (a spike of every request since the start, at each reload). So the counters and histograms a
 * worker last answered are kept once it has gone, added to every later sum: the sum only grows, short of
 * what a worker counted between its last scrape and its exit. Its gauges go with it (they say what is now).
 * The supervisor's own restart starts every count again, as `process_start_time_seconds` says.
 *
 * prom-client's aggregation leaves out `process_start_time_seconds` (workers start at different times), so
 * the sum would have no start time at all: it is the supervisor's, the process an operator started and
 * whose restart is the service's (a reload replaces workers, not it), as `time() - process_start_time_seconds`
 * and restart alerts read it.
 */

/** A metric as getMetricsAsJSON() gives it, as far as it is read here. */
interface MetricJson {
  type?: unknown;
  aggregator?: unknown;
}

/** What of a worker's metrics outlives it: its counters and histograms, which add up across workers. */
function counts(metrics: unknown[]): unknown[] {
  return metrics.filter((metric) => {
    const { type, aggregator } = metric as MetricJson;
    return (type === 'counter' || type === 'histogram') && (aggregator === undefined || aggregator === 'sum');
  });
}

/**
 * The scrape's answer: the sum of every worker's metrics, each as its registry's getMetricsAsJSON() gave
 * them, by worker (any object that stays the same for one worker), and of the counts of workers gone.
 */
export function summed(workers: () => Promise<Map<object, unknown[]>>): Scrape {
  /** Each worker's latest answer, until it is seen gone: no longer among those asked. */
  const latest = new Map<object, unknown[]>();
  /** The counts of every worker gone, summed. */
  let gone: unknown[] = [];
  const scrape = async () => {
    const answers = await workers();
    const left = [...latest.keys()].filter((worker) => !answers.has(worker));
    if (left.length > 0) gone = await AggregatorRegistry.aggregate([gone, ...left.map((worker) => counts(latest.get(worker)!))]).getMetricsAsJSON();
    for (const worker of left) latest.delete(worker);
    // An empty answer is a worker exiting as it was asked: its answer before stands until it is gone.
    for (const [worker, metrics] of answers) if (metrics.length > 0) latest.set(worker, metrics);
    const registry = AggregatorRegistry.aggregate([gone, ...latest.values()]);
    const started = new Gauge({
      name: 'process_start_time_seconds',
      help: 'Start time of the process since unix epoch in seconds.',
      registers: [registry],
    });
    started.set(START_TIME_SECONDS);
    return { contentType: registry.contentType, body: await registry.metrics() };
  };
  // One scrape at a time (two scrapers at once): each reads and updates what the one before left.
  let queue: Promise<unknown> = Promise.resolve();
  return () => {
    const next = queue.then(scrape, scrape);
    queue = next.catch(() => undefined);
    return next;
  };
}

/** When this process started, in whole seconds since the epoch (prom-client's own reckoning of it). */
const START_TIME_SECONDS = Math.round(Date.now() / 1000 - process.uptime());
