import cluster from 'node:cluster';
import { buildApp } from './app.js';
import { bootstrapToken, warnWithoutTokens } from './auth/bootstrap.js';
import type { Registry } from 'prom-client';
import { startBackups, type ScheduleLog } from './backups/schedule.js';
import { runPrimary } from './process/cluster.js';
import { Services, type Service } from './process/services.js';
import { rootWarning } from './process/root.js';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { sweepExpiredEvents } from './events/retention.js';
import { chooseLogFormat, prettyDestination } from './logging/format.js';
import { createLogger, logDestination } from './logging/logger.js';
import { RequestPressure } from './http/request-pressure.js';
import { sweepExpiredKeys } from './http/idempotency.js';
import type { Metrics } from './metrics/registry.js';
import { listenForScrapes, type ScrapeAddress } from './metrics/server.js';
import { tracesUrl } from './config/tracing.js';
import { redactUrl } from './store/database-url.js';
import { openStore } from './store/open.js';
import { Sender } from './webhooks/delivery.js';
import { Dispatcher } from './webhooks/dispatcher.js';
import type { Tracing } from './tracing/sdk.js';

/** The longest a graceful stop waits for requests in flight before exiting anyway (exit code 1). */
const FORCE_EXIT_MS = 10_000;
/** The longest a graceful stop waits for webhook deliveries in flight; the rest are sent again after their lease. */
const DELIVERY_GRACE_MS = 3000;

/** The metrics listener's address and the names it answers to (METRICS_PORT is set when this is called). */
function scrapeAddress(config: Config): ScrapeAddress {
  return { host: config.metricsHost, port: config.metricsPort!, allowedHosts: config.metricsAllowedHosts };
}

/**
 * The process: reads the configuration, opens the store, serves, and shuts down cleanly on SIGTERM or
 * SIGINT (stop accepting, finish the requests in flight, close the store, exit 0).
 */
async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`plant-store: cannot start: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }

  const clustered = config.webConcurrency > 1 && cluster.isPrimary;
  // METRICS_PORT: a registry in each serving process; with workers, the primary serves their sum (metrics/cluster.ts).
  // prom-client and the metrics modules are loaded only then: an idle process without them is about 10 MB smaller.
  const metrics: Metrics | undefined =
    config.metricsPort !== undefined && !clustered ? new (await import('./metrics/registry.js')).Metrics() : undefined;
  if (metrics && cluster.isWorker) (await import('./metrics/cluster.js')).answerPrimary(metrics.registry);
  // The serving process's logger (the primary of several workers serves nothing and logs to stderr).
  const logger = clustered ? undefined : await processLogger(config);
  // OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT): the SDK is loaded only when they are on, in each
  // serving process (with workers, each worker traces; the primary serves nothing).
  const tracesTo = tracesUrl(config);
  const tracing: Tracing | undefined =
    logger && tracesTo ? await (await import('./tracing/sdk.js')).startTracing(config, tracesTo, (message) => logger.warn(message)) : undefined;
  // Started in this order and stopped in the reverse (process/services.ts).
  const services = new Services();
  if (tracing) await services.start({ name: 'tracing', stop: () => tracing.shutdown() });
  const store = await openStore(config, { onCommit: metrics?.onCommit, tracing: tracing?.batches });
  await services.start({ name: 'store', stop: () => store.close() });
  await bootstrapToken(store, config, (text) => process.stderr.write(text));
  await warnWithoutTokens(store, config, (text) => process.stderr.write(text));
  if (clustered) {
    // Migrated and bootstrapped once, here; the workers find both done. The primary serves nothing but
    // metrics, and takes the scheduled backups (one process must), whose metrics it serves beside the workers'.
    await services.stopAll(reportTo(stderrLine));
    const own = config.metricsPort !== undefined && config.backupDir !== '' ? new (await import('prom-client')).Registry() : undefined;
    if (config.backupDir !== '') await services.start(await backupService(config, await processLogger(config), own));
    if (config.metricsPort !== undefined) {
      const scrapes = await listenForScrapes(scrapeAddress(config), (await import('./metrics/cluster.js')).clusterScrape(own), (error) =>
        stderrLine(`metrics scrape failed: ${error instanceof Error ? error.message : String(error)}`),
      );
      await services.start({ name: 'metrics listener', stop: () => scrapes.close() });
      stderrLine(`metrics listening at ${scrapes.url}`);
    }
    const asRoot = rootWarning(process.geteuid?.());
    if (asRoot) stderrLine(`warning: ${asRoot}`);
    runPrimary(config.webConcurrency, () => void services.stopAll(reportTo(stderrLine)));
    return;
  }
  const app = await buildApp({ config, store, logger, metrics, tracing });
  for (const warning of store.warnings) app.log.warn(warning);
  // Said once: by the primary when there are workers.
  const asRoot = cluster.isWorker ? undefined : rootWarning(process.geteuid?.());
  if (asRoot) app.log.warn(asRoot);
  store.searchIndex.onFailure((message) =>
    app.log.error(`search index: cannot catch up with the writes (${message}); searches stay exact, trying again every second`),
  );
  if (config.webhookAllowPrivateNetworks) {
    app.log.warn(
      'WEBHOOK_ALLOW_PRIVATE_NETWORKS is on: webhook URLs may reach loopback, private and link-local addresses, so anyone holding webhooks:manage can make this service send requests into its own network (for development and tests only)',
    );
  }

  // Webhook deliveries, from the outbox in the store, in the background of this process, giving way to
  // requests whenever they need all the CPU.
  const sender = new Sender({ timeoutMs: config.webhookTimeoutMs, allowPrivateNetworks: config.webhookAllowPrivateNetworks });
  await services.start({ name: 'webhook sender', stop: () => sender.close() });
  const pressure = new RequestPressure(app.server, store.writeBatches);
  await services.start({ name: 'request pressure', start: () => pressure.start(), stop: () => pressure.stop() });
  const dispatcher = new Dispatcher(
    store.webhooks,
    tracing ? tracing.traceDeliveries(sender) : sender,
    {
      concurrency: config.webhookConcurrency,
      timeoutMs: config.webhookTimeoutMs,
      retrySchedule: config.webhookRetrySchedule,
      disableAfterHours: config.webhookDisableAfterHours,
      retentionDays: config.webhookRetentionDays,
    },
    app.log,
    pressure,
  );
  if (metrics) {
    metrics.watchBacklog(() => store.webhooks.countPending());
    metrics.watchSearchIndex(() => store.searchIndex.lag());
    metrics.watchIdempotencyKeys(() => store.idempotency.count());
    dispatcher.onAttempt(metrics.onDeliveryAttempt);
  }
  await services.start({ name: 'webhook deliveries', start: () => dispatcher.start(), stop: () => dispatcher.stop(DELIVERY_GRACE_MS) });
  let stopSweeping = (): void => undefined;
  await services.start({
    name: 'events retention sweep',
    start: () => void (stopSweeping = sweepExpiredEvents(store.events, config.eventsRetentionDays, app.log)),
    stop: () => stopSweeping(),
  });
  let stopKeySweep = (): void => undefined;
  await services.start({
    name: 'idempotency keys sweep',
    start: () => void (stopKeySweep = sweepExpiredKeys(store.idempotency, config.idempotencyKeyTtlSeconds * 1000, app.log)),
    stop: () => stopKeySweep(),
  });
  // Scheduled backups (BACKUP_DIR): by this process, unless it is one of several workers (the primary takes them).
  if (!cluster.isWorker && config.backupDir !== '') await services.start(await backupService(config, app.log, metrics?.registry));
  // A worker's metrics are served by the primary; a single process serves its own.
  if (metrics && !cluster.isWorker) {
    const scrapes = await listenForScrapes(scrapeAddress(config), metrics.scrape, (error) => app.log.error({ err: error }, 'metrics scrape failed'));
    await services.start({ name: 'metrics listener', stop: () => scrapes.close() });
    app.log.info({ url: scrapes.url }, `metrics listening at ${scrapes.url}`);
  }
  // The HTTP listener, started last and so stopped first: no new request arrives while the rest stop.
  const http = httpService(app, config);
  try {
    await services.start(http);
  } catch (error) {
    await services.stopAll(reportTo((text) => app.log.error(text)));
    throw error;
  }
  handleSignals(app, http, services);
  if (tracing) app.log.info({ traces: tracing.endpoint }, `tracing on: spans to ${tracing.endpoint}`);
  app.log.info({ store: store.kind, database: redactUrl(config.databaseUrl) }, 'plant store ready');
}

type App = Awaited<ReturnType<typeof buildApp>>;

/**
 * The HTTP listener as a service. Its stop finishes the requests in flight: close() ends the connections
 * idle at that moment, but a keep-alive connection whose request was in flight turns idle only after its
 * answer, and would hold close() open until its keep-alive timeout, so those are swept as they turn idle.
 * app.close() also ends the event streams (events/routes.ts), so that they do not hold it open.
 */
function httpService(app: App, config: Config): Service & { stopping: boolean } {
  const service = {
    name: 'http listener',
    stopping: false,
    async start() {
      await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
        const code = (error as NodeJS.ErrnoException).code ?? String(error);
        throw new Error(`HOST/PORT: cannot listen on ${config.host}:${config.port} (${code})`, { cause: error });
      });
    },
    async stop() {
      service.stopping = true;
      const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
      sweep.unref();
      try {
        await app.close();
      } finally {
        clearInterval(sweep);
      }
    },
  };
  // Answers finished while stopping tell the client to close its keep-alive connection, so it does
  // not send its next request into a connection about to end.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (service.stopping) reply.header('connection', 'close');
    done(null, payload);
  });
  return service;
}

/** SIGTERM and SIGINT stop every service gracefully (within FORCE_EXIT_MS), then exit 0; a second signal exits at once. */
function handleSignals(app: App, http: { stopping: boolean }, services: Services): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      // A worker may be told twice (its own SIGTERM and the primary's); the primary decides "now".
      if (cluster.isWorker) return;
      // An operator pressing Ctrl-C twice means "now".
      app.log.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    stopping = true;
    http.stopping = true;
    app.log.info({ signal }, 'shutting down: finishing requests in flight');
    const force = setTimeout(() => {
      app.log.error(`requests still in flight after ${FORCE_EXIT_MS / 1000} s; exiting anyway`);
      process.exit(1);
    }, FORCE_EXIT_MS);
    force.unref();
    // The spans of the last requests and deliveries are exported before exiting (bounded: tracing/sdk.ts).
    void services
      .stopAll((name, error) => app.log.error({ err: error }, `error while shutting down: ${name}`))
      .then((clean) => {
        if (clean) app.log.info('stopped');
        process.exit(clean ? 0 : 1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  // Ctrl-C reaches every process of the group; a worker leaves it to the primary, which sends SIGTERM.
  process.on('SIGINT', () => (cluster.isWorker ? undefined : stop('SIGINT')));
}

/** Scheduled backups (BACKUP_DIR set) as a service: a backup under way finishes before it stops. */
async function backupService(config: Config, log: ScheduleLog, registry: Registry | undefined): Promise<Service> {
  const schedule = await startBackups(config, log, registry);
  return { name: 'backups', stop: () => schedule?.stop() };
}

function stderrLine(text: string): void {
  process.stderr.write(`plant-store: ${text}\n`);
}

function reportTo(write: (text: string) => void): (name: string, error: unknown) => void {
  return (name, error) => write(`error while shutting down: ${name}: ${error instanceof Error ? error.message : String(error)}`);
}

/**
 * The process's logger: JSON lines on stdout, written in batches, or readable text for a person at a
 * terminal; tokens never reach a line (see logging/logger.ts). The first token's message went to stderr.
 */
async function processLogger(config: Config) {
  const format = chooseLogFormat(config.logFormat, process.stdout.isTTY === true, process.env.NODE_ENV);
  return createLogger(config.logLevel, format === 'pretty' ? await prettyDestination() : logDestination());
}

main().catch((error: unknown) => {
  process.stderr.write(`plant-store: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
