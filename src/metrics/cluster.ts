import { AggregatorRegistry } from 'prom-client';
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
 */

/** The scrape's answer: the sum of every worker's metrics, each as its registry's getMetricsAsJSON() gave them. */
export function summed(workers: () => Promise<unknown[][]>): Scrape {
  return async () => {
    const registry = AggregatorRegistry.aggregate(await workers());
    return { contentType: registry.contentType, body: await registry.metrics() };
  };
}
