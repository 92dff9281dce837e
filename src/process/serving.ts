import type { Logger } from 'pino';
import { buildApp } from '../app.js';
import { Lifecycle, type Service } from '../app/services.js';
import { bootstrapToken, warnWithoutTokens } from '../auth/bootstrap.js';
import type { Config } from '../config/config.js';
import { tracesUrl } from '../config/tracing.js';
import type { Metrics } from '../metrics/registry.js';
import { redactUrl } from '../store/database-url.js';
import { migrationNames } from '../store/migration.js';
import { openStore } from '../store/open.js';
import { StoreUnavailableError, type Store } from '../store/store.js';
import { VERSION } from '../version.js';
import { backupService, idempotencySweep, retentionSweep, webhookDeliveries, type Made } from './background.js';
import { httpListener } from './listeners.js';
import { processLogger, startupWarnings } from './log.js';
import type { WorkerRole } from './protocol.js';
import { supervisorRateCounter } from './rate-counter.js';
import { revocationTeller } from './revocations.js';
import { answerSupervisor, tell } from './signals.js';

/**
 * A serving process, one of the supervisor's workers (process/supervisor.ts): its services in the order
 * they start, one list; the Lifecycle stops them in the reverse order, so that nothing stops before what
 * still uses it: the HTTP listener first (after its drain: no new work, the requests in flight finished,
 * the app closed), the deliveries and sweeps before the store they use, the store before tracing exports
 * its last spans. A new background job is one more entry. (The app's own timers, the request deadlines,
 * load shedding, JWT keys and the change feed, start and stop with the app: app/services.ts says why.)
 * `role` is what the supervisor asked of this worker: whether it says what is said once per start, takes
 * the backups, replaces a worker in a reload.
 */
export async function serve(config: Config, role: WorkerRole): Promise<void> {
  workingFolderHere();
  // METRICS_PORT: a registry in each worker, summed by the supervisor, which serves them. prom-client and the
  // metrics modules are loaded only then: an idle process without them is about 10 MB smaller.
  const metrics: Metrics | undefined = config.metricsPort !== undefined ? new (await import('../metrics/registry.js')).Metrics() : undefined;
  const logger = await processLogger(config);
  const tracesTo = tracesUrl(config);
  // Filled in as the services start, for those after them.
  const made = { metrics } as Made;

  const services: Service[] = [
    // 1. Tracing (OTEL_EXPORTER_OTLP_ENDPOINT): the SDK, loaded only when on.
    ...(tracesTo ? [tracingService(config, tracesTo, made, logger)] : []),
    // 2. The store, migrated as it opens (several processes starting at once apply each migration once),
    //    saying what it changed in the schema: the operator can tell when an upgrade changed it.
    {
      name: 'store',
      start: async () => {
        made.store = await openStore(config, { onCommit: metrics?.onCommit, tracing: made.tracing?.batches });
        logMigrated(logger, made.store, config.databaseUrl);
      },
      stop: () => made.store.close(),
    },
    // 3. The app (not listening yet) and what the operator should know of this start. The app closes as the
    //    HTTP listener stops, its requests done, before anything it uses stops.
    {
      name: 'app',
      start: async () => {
        // Several workers on a store that counts no rate limits (SQLite): their supervisor counts them.
        const rateCounter = role.countsRates === true && !made.store.rateCounter ? supervisorRateCounter() : undefined;
        // A token revoked here is refused by the other workers from the answer on: the supervisor tells them.
        const tellRevoked = role.relaysRevocations === true ? revocationTeller() : undefined;
        const app = (made.app = await namingTheStore(config, () =>
          buildApp({ config, store: made.store, logger, metrics, tracing: made.tracing, rateCounter, tellRevoked }),
        ));
        startupWarnings(app.log, config, made.store);
      },
    },
    // 4. The metrics read from the store at each scrape.
    ...(metrics ? [metricsWatchers(metrics, made)] : []),
    // 5. Webhook deliveries from the outbox, giving way to requests when they need all the CPU.
    webhookDeliveries(config, made),
    // 6. The sweeps: events past EVENTS_RETENTION_DAYS, Idempotency-Key outcomes past IDEMPOTENCY_KEY_TTL.
    retentionSweep(config, made),
    idempotencySweep(config, made),
    // 7. Scheduled backups (BACKUP_DIR), by the one worker the supervisor asked.
    ...(role.backups && config.backupDir !== '' ? [backupService(config, made)] : []),
    // 8. The HTTP listener, last, and so stopped first.
    httpListener(made, config),
  ];

  const lifecycle = new Lifecycle();
  try {
    await lifecycle.start(...services);
    // Once per start, the first token: only once everything started, listening included. Made by a start
    // that then failed (its port taken), it was shown by a failed start only, and no later start made one.
    if (role.announce) {
      await namingTheStore(config, async () => {
        await bootstrapToken(made.store, config, (text) => process.stderr.write(text));
        await warnWithoutTokens(made.store, config, (text) => process.stderr.write(text));
      });
    }
  } catch (error) {
    await lifecycle.stop((name, failure) => logger.error({ err: failure }, `error while shutting down: ${name}`));
    throw error;
  }
  const { app, store, tracing } = made;
  answerSupervisor(lifecycle, config, app, app.log, metrics?.registry);
  if (tracing) app.log.info({ traces: tracing.endpoint }, `tracing on: spans to ${tracing.endpoint}`);
  app.log.info({ store: store.kind, database: redactUrl(config.databaseUrl), version: VERSION }, 'plant store ready');
  tell({ plantStore: 'ready', version: VERSION });
}

/** The schema made, or the migrations applied, by this process's opening of the store (none: nothing said). */
function logMigrated(logger: Logger, store: Store, databaseUrl: string): void {
  const { created, applied } = store.migrated;
  if (applied.length === 0) return;
  const fields = { store: store.kind, database: redactUrl(databaseUrl), migrations: applied.map((m) => m.version) };
  logger.info(
    fields,
    created ? `created the ${store.kind} store, with the current schema` : `applied ${migrationNames(applied)} to the ${store.kind} store`,
  );
}

/**
 * Tracing, started first and stopped last: the spans of the last requests and deliveries are exported,
 * waiting for the collector 5 s at most (tracing/sdk.ts) and never past the stop's deadline
 * (SHUTDOWN_TIMEOUT_MS): a collector that does not answer must not turn a clean stop into a forced exit.
 */
function tracingService(config: Config, url: string, made: Made, logger: Logger): Service {
  return {
    name: 'tracing',
    start: async () => void (made.tracing = await (await import('../tracing/sdk.js')).startTracing(config, url, (message) => logger.warn(message))),
    stop: (deadline) => made.tracing?.shutdown(deadline === undefined ? undefined : Math.max(0, deadline - Date.now())),
  };
}

/** The gauges read from the store at each scrape: the webhook backlog, the search index's lag, the keys kept. */
function metricsWatchers(metrics: Metrics, made: Made): Service {
  return {
    name: 'metrics watchers',
    start: () => {
      metrics.watchBacklog(() => made.store.webhooks.countPending());
      metrics.watchSearchIndex(() => made.store.searchIndex.lag());
      metrics.watchIdempotencyKeys(() => made.store.idempotency.count());
    },
  };
}

/**
 * A worker whose working folder was deleted (its install folder removed, none in its place) would start,
 * say ready, and refuse every write: the SQLite writer thread cannot start without one. It fails its start
 * instead, and a reload into it fails with the workers serving left in place.
 */
function workingFolderHere(): void {
  try {
    process.cwd();
  } catch (error) {
    throw new Error(
      'the working folder this process was started in was deleted (the install folder removed?): start the service from a folder that exists',
      {
        cause: error,
      },
    );
  }
}

/**
 * The store opened, then failed its first queries (its pool's connections, beyond the migrator's one,
 * refused: too many clients): the start's one line names the setting, as the opening's does.
 */
async function namingTheStore<T>(config: Config, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    throw new Error(`DATABASE_URL: ${redactUrl(config.databaseUrl)}: ${error.message}`, { cause: error });
  }
}
