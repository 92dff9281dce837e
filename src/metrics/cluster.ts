import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Scrape } from './server.js';

/**
 * Metrics with WEB_CONCURRENCY > 1 (node:cluster): each worker keeps its own registry, and the primary,
 * which serves no requests, owns the metrics listener. A scrape of it asks every worker over the cluster's
 * IPC channel and answers their metrics aggregated by prom-client's AggregatorRegistry: counters and
 * histograms added up, each default metric by its own rule, the webhook backlog by its largest value.
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

/**
 * In the primary: every worker's metrics, aggregated (a worker that does not answer within 5 s fails the
 * scrape), followed by the primary's `own` metrics (the scheduled backups', which no worker has).
 */
export function clusterScrape(own?: Registry): Scrape {
  const aggregator = new AggregatorRegistry();
  return async () => {
    const [workers, primary] = await Promise.all([aggregator.clusterMetrics(), own?.metrics() ?? '']);
    const separator = primary !== '' && !workers.endsWith('\n') ? '\n' : '';
    return { contentType: aggregator.contentType, body: `${workers}${separator}${primary}` };
  };
}
