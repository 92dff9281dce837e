import { availableParallelism } from 'node:os';
import type { App } from '../app.js';
import { Lifecycle, type Service } from '../app/services.js';
import { startBackups } from '../backups/schedule.js';
import type { Config } from '../config/config.js';
import { sweepExpiredEvents } from '../events/retention.js';
import { RequestPressure } from '../http/request-pressure.js';
import type { Metrics } from '../metrics/registry.js';
import { sweepExpiredKeys } from '../store/idempotency-sweep.js';
import type { Store } from '../store/store.js';
import type { Tracing } from '../tracing/sdk.js';
import { DeliveryThread } from '../webhooks/delivery-thread.js';
import { Sender } from '../webhooks/delivery.js';
import { Dispatcher } from '../webhooks/dispatcher.js';

/**
 * What a serving process runs in the background of its requests, each as a service (process/serving.ts
 * lists them). Each is made now and started in its turn, from what the services before it made (`made`,
 * filled in as they start: the store, the app).
 */

/** What a serving process's first services make, for those after them. */
export interface Made {
  store: Store;
  app: App;
  metrics?: Metrics | undefined;
  tracing?: Tracing | undefined;
}

/** The longest a graceful stop waits for webhook deliveries in flight; the rest are sent again after their lease. */
const DELIVERY_GRACE_MS = 3000;

/**
 * Webhook deliveries from the outbox in the store: what sends them (a thread of their own, webhooks/delivery-thread.ts),
 * the measure of how busy the request path is (deliveries give way to requests when they need all the CPU),
 * and the loop that claims, sends and records; started in this order, stopped in the reverse one.
 */
export function webhookDeliveries(config: Config, made: Made): Service {
  const parts = new Lifecycle();
  return {
    name: 'webhook deliveries',
    async start() {
      const { store, app, metrics, tracing } = made;
      // A thread of their own where a second core can take them; on one core, the main thread (a thread would
      // only add its hand-offs to each delivery's CPU: about 150 µs a delivery against 105, measured in bench/RESULTS.md).
      const options = { timeoutMs: config.webhookTimeoutMs, allowPrivateNetworks: config.webhookAllowPrivateNetworks };
      const sender = availableParallelism() > 1 ? new DeliveryThread(options) : new Sender(options);
      // PostgreSQL writes in processes of its own, whose CPU this one cannot see: there its queue counts too.
      const pressure = new RequestPressure(app.server, store.kind === 'postgres' ? store.writeBatches : undefined);
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
      if (metrics) dispatcher.onAttempt(metrics.onDeliveryAttempt);
      await parts.start(
        { name: 'webhook sender', start: () => warmUpSender(sender, store, app), stop: () => sender.close() },
        { name: 'request pressure', start: () => pressure.start(), stop: () => pressure.stop() },
        { name: 'webhook dispatcher', start: () => dispatcher.start(), stop: () => dispatcher.stop(DELIVERY_GRACE_MS) },
      );
    },
    async stop() {
      const failures: string[] = [];
      await parts.stop((name, error) => failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`));
      if (failures.length > 0) throw new Error(failures.join('; '));
    },
  };
}

/**
 * Where the store has webhook endpoints, the sender loads its HTTP client before the process is ready, not
 * at its first delivery: on one core that load (90–110 ms of CPU) would stall the requests of a process just
 * restarted or reloaded, at the moment it takes traffic. A store without endpoints spares the memory until
 * one is added. A client that cannot load does not stop the start: each delivery then records why.
 */
async function warmUpSender(sender: Sender | DeliveryThread, store: Store, app: App): Promise<void> {
  if ((await store.webhooks.listEndpoints({ limit: 1 })).length === 0) return;
  try {
    await sender.warmUp();
  } catch (error) {
    app.log.error({ err: error }, 'cannot load the webhook HTTP client; deliveries will record the failure');
  }
}

/** A sweep that runs at start and then on a timer of its own, as a service (`sweep` answers a function that stops it). */
function sweeper(name: string, sweep: () => () => void): Service {
  let stop = (): void => undefined;
  return { name, start: () => void (stop = sweep()), stop: () => stop() };
}

/** The events older than EVENTS_RETENTION_DAYS, deleted every hour. */
export function retentionSweep(config: Config, made: Made): Service {
  return sweeper('events retention sweep', () => sweepExpiredEvents(made.store.events, config.eventsRetentionDays, made.app.log));
}

/** The Idempotency-Key outcomes past IDEMPOTENCY_KEY_TTL, deleted in bounded batches. */
export function idempotencySweep(config: Config, made: Made): Service {
  return sweeper('idempotency keys sweep', () => sweepExpiredKeys(made.store.idempotency, config.idempotencyKeyTtlSeconds * 1000, made.app.log));
}

/** Scheduled backups (BACKUP_DIR set): a backup under way when they stop is ended, its partial file removed (backups/schedule.ts). */
export function backupService(config: Config, made: Made): Service {
  let schedule: Awaited<ReturnType<typeof startBackups>>;
  return {
    name: 'backups',
    start: async () => void (schedule = await startBackups(config, made.app.log, made.metrics?.registry)),
    // Leaving (a reload's successor takes the schedule over; or the service stops): none begun any more.
    drain: () => schedule?.hold(),
    stop: () => schedule?.stop(),
  };
}
