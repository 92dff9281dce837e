import cluster from 'node:cluster';
import { buildApp } from '../app.js';
import { bootstrapToken, warnWithoutTokens } from '../auth/bootstrap.js';
import type { Config } from '../config/config.js';
import { tracesUrl } from '../config/tracing.js';
import type { Metrics } from '../metrics/registry.js';
import { redactUrl } from '../store/database-url.js';
import { openStore } from '../store/open.js';
import type { Tracing } from '../tracing/sdk.js';
import { backupService, idempotencySweep, retentionSweep, webhookDeliveries } from './background.js';
import { httpListener, logOf, metricsListener } from './listeners.js';
import { processLogger, startupWarnings } from './log.js';
import { Services } from './services.js';
import { handleSignals } from './signals.js';

/**
 * A serving process (the only one, or one of WEB_CONCURRENCY workers): every long-lived thing it runs, in
 * the order they start; Services stops them in the reverse order, so that nothing stops before what still
 * uses it: the HTTP listener first (no new work), the deliveries and sweeps before the store they use, the
 * store before tracing exports its last spans. A new background job is one more line of this list. (The
 * app's own timers, the request deadlines, load shedding, JWT keys and the change feed, start and stop with
 * the app: app/services.ts says why.)
 */
export async function serve(config: Config): Promise<void> {
  const services = new Services();
  // METRICS_PORT: a registry in each serving process (a worker's metrics are summed and served by the primary).
  // prom-client and the metrics modules are loaded only then: an idle process without them is about 10 MB smaller.
  const metrics: Metrics | undefined = config.metricsPort !== undefined ? new (await import('../metrics/registry.js')).Metrics() : undefined;
  if (metrics && cluster.isWorker) (await import('../metrics/cluster.js')).answerPrimary(metrics.registry);
  const logger = await processLogger(config);

  // 1. Tracing (OTEL_EXPORTER_OTLP_ENDPOINT): the SDK, loaded only when on.
  const tracesTo = tracesUrl(config);
  const tracing: Tracing | undefined = tracesTo
    ? await (await import('../tracing/sdk.js')).startTracing(config, tracesTo, (message) => logger.warn(message))
    : undefined;
  if (tracing) await services.start({ name: 'tracing', stop: () => tracing.shutdown() });
  // 2. The store, migrated as it opens; then the first token, when there is none.
  const store = await openStore(config, { onCommit: metrics?.onCommit, tracing: tracing?.batches });
  await services.start({ name: 'store', stop: () => store.close() });
  await bootstrapToken(store, config, (text) => process.stderr.write(text));
  await warnWithoutTokens(store, config, (text) => process.stderr.write(text));
  // 3. The app (not listening yet), and what the operator should know of this start.
  const app = await buildApp({ config, store, logger, metrics, tracing });
  startupWarnings(app.log, config, store, { asRoot: !cluster.isWorker });
  if (metrics) {
    metrics.watchBacklog(() => store.webhooks.countPending());
    metrics.watchSearchIndex(() => store.searchIndex.lag());
    metrics.watchIdempotencyKeys(() => store.idempotency.count());
  }
  // 4. Webhook deliveries from the outbox, giving way to requests when they need all the CPU.
  for (const service of webhookDeliveries(config, { store, app, metrics, tracing })) await services.start(service);
  // 5. The sweeps: events past EVENTS_RETENTION_DAYS, Idempotency-Key outcomes past IDEMPOTENCY_KEY_TTL.
  await services.start(retentionSweep(config, store, app.log));
  await services.start(idempotencySweep(config, store, app.log));
  // 6. Scheduled backups (BACKUP_DIR), by this process unless it is a worker (the primary takes them).
  if (!cluster.isWorker && config.backupDir !== '') await services.start(await backupService(config, app.log, metrics?.registry));
  // 7. The metrics listener (METRICS_PORT), unless a worker's (the primary serves the sum).
  if (metrics && !cluster.isWorker) await services.start(await metricsListener(config, metrics.scrape, logOf(app.log)));
  // 8. The HTTP listener, last, and so stopped first.
  const http = httpListener(app, config);
  try {
    await services.start(http);
  } catch (error) {
    await services.stopAll((name, failure) => app.log.error({ err: failure }, `error while shutting down: ${name}`));
    throw error;
  }
  handleSignals(app.log, services, () => http.closing());
  if (tracing) app.log.info({ traces: tracing.endpoint }, `tracing on: spans to ${tracing.endpoint}`);
  app.log.info({ store: store.kind, database: redactUrl(config.databaseUrl) }, 'plant store ready');
}
