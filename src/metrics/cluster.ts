import { AggregatorRegistry, Gauge } from 'prom-client';
import type { Scrape } from './server.js';

/**
 * Metrics of the supervisor's workers (process/workers.ts): each worker keeps its own registry, and the
 * supervisor, which serves no requests, owns the metrics listener. A scrape of it asks every worker that
 * serves for its registry as JSON (process/protocol.ts: not prom-client's own cluster messages, whose form
 * could change from one release's prom-client to the next, while a supervisor outlives releases), and
 * answers their sum, by prom-client's aggregation: counters and histograms added up, each default metric by
 * its own rule, the gauges read from the store (the webhook backlog, the backups') by their largest value.
 * During a reload the old and the new worker both answer for a moment; the old one's counts leave the sum
 * when it exits (a counter reset, to Prometheus).
 *
 * prom-client's aggregation leaves out `process_start_time_seconds` (workers start at different times), so
 * the sum would have no start time at all: it is the supervisor's, the process an operator started and
 * whose restart is the service's (a reload replaces workers, not it), as `time() - process_start_time_seconds`
 * and restart alerts read it.
 */

/** The scrape's answer: the sum of every worker's metrics, each as its registry's getMetricsAsJSON() gave them. */
export function summed(workers: () => Promise<unknown[][]>): Scrape {
  return async () => {
    const registry = AggregatorRegistry.aggregate(await workers());
    const started = new Gauge({
      name: 'process_start_time_seconds',
      help: 'Start time of the process since unix epoch in seconds.',
      registers: [registry],
    });
    started.set(START_TIME_SECONDS);
    return { contentType: registry.contentType, body: await registry.metrics() };
  };
}

/** When this process started, in whole seconds since the epoch (prom-client's own reckoning of it). */
const START_TIME_SECONDS = Math.round(Date.now() / 1000 - process.uptime());
