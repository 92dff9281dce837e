import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Scrape } from './server.js';

/**
 * Metrics of the supervisor's workers (process/workers.ts, node:cluster): each worker keeps its own registry,
 * and the supervisor, which serves no requests, owns the metrics listener. A scrape of it asks every worker
 * over the cluster's IPC channel and answers their metrics aggregated by prom-client's AggregatorRegistry:
 * counters and histograms added up, each default metric by its own rule, the gauges read from the store
 * (the webhook backlog, the backups') by their largest value. During a reload the old and the new worker
 * both answer for a moment; the old one's counts leave the sum when it exits (a counter reset, to Prometheus).
 */

/**
 * In a worker: answer the primary's requests with this registry. prom-client installs the worker's
 * message listener when an AggregatorRegistry is made; do it early, so that a scrape during the worker's
 * start is answered rather than timed out.
 */
export function answerPrimary(registry: Registry): void {
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
}

/** In the supervisor: every worker's metrics, aggregated (a worker that does not answer within 5 s fails the scrape). */
export function clusterScrape(): Scrape {
  const aggregator = new AggregatorRegistry();
  return async () => ({ contentType: aggregator.contentType, body: await aggregator.clusterMetrics() });
}
