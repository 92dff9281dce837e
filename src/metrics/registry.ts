import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CommitObserver } from '../store/store.js';
import type { FeedObserver } from '../events/feed.js';
import type { IdempotencyObserver } from '../http/idempotency.js';
import type { AttemptRecord } from '../store/webhook-store.js';
import type { Scrape } from './server.js';

/**
 * The service's Prometheus metrics, in a registry of its own (never prom-client's global one, so that test
 * apps and processes do not share counts): requests by route template, commits of writes, webhook
 * deliveries and backlog, and Node's default process metrics. Made only when METRICS_PORT is set; the
 * request path then pays for one hook (metrics/hooks.ts), and nothing at all otherwise.
 */

/** Request durations in seconds: from 0.5 ms (a cached read) to 10 s (a request that waited on a stalled database). */
const REQUEST_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Writes per commit: powers of two up to the thread's usual ceiling under load (a few hundred). */
const BATCH_SIZES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
/** Commit durations in seconds: an fsync takes a few milliseconds on an ordinary disk. */
const COMMIT_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const OUTCOMES: ReadonlyArray<AttemptRecord['outcome']> = ['delivered', 'retry', 'failed'];
/** A scrape does not wait longer than this for the backlog count (a stalled database): the gauge reads NaN then. */
const BACKLOG_TIMEOUT_MS = 2000;

export type RequestLabel = 'method' | 'route' | 'status';

export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<RequestLabel>;
  readonly requestSeconds: Histogram<'method' | 'route'>;
  private readonly batchSize: Histogram;
  private readonly commitSeconds: Histogram;
  private readonly deliveries: Counter<'outcome'>;
  private readonly streams: Gauge;
  private readonly eventsSent: Counter;
  private readonly replays: Counter;
  private readonly keyConflicts: Counter<'reason'>;

  constructor() {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route template (unmatched: no route) and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.requestSeconds = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to sending its answer, by method and route template',
      labelNames: ['method', 'route'],
      buckets: REQUEST_SECONDS,
      registers,
    });
    this.batchSize = new Histogram({
      name: 'plant_store_commit_batch_size',
      help: 'Writes committed together in one transaction (group commit, on either store)',
      buckets: BATCH_SIZES,
      registers,
    });
    this.commitSeconds = new Histogram({
      name: 'plant_store_commit_duration_seconds',
      help: 'Time from sending a batch of writes to the database until it committed',
      buckets: COMMIT_SECONDS,
      registers,
    });
    this.deliveries = new Counter({
      name: 'plant_store_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: delivered (2xx), retry (scheduled again), failed (given up, or 410 Gone)',
      labelNames: ['outcome'],
      registers,
    });
    // Every outcome from the start, so that rate() and alerts see a 0 rather than no series.
    for (const outcome of OUTCOMES) this.deliveries.inc({ outcome }, 0);
    this.streams = new Gauge({ name: 'plant_store_event_streams', help: 'Event streams (GET /events as text/event-stream) open now', registers });
    this.eventsSent = new Counter({
      name: 'plant_store_events_sent_total',
      help: 'Events written into event streams (one per event and stream)',
      registers,
    });
    this.replays = new Counter({
      name: 'plant_store_idempotency_replays_total',
      help: 'POSTs answered again from the outcome kept under their Idempotency-Key (Idempotent-Replayed: true), nothing done again',
      registers,
    });
    this.keyConflicts = new Counter({
      name: 'plant_store_idempotency_conflicts_total',
      help: 'POSTs refused for their Idempotency-Key: running (409, the first request with it still runs) or another-request (422)',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of ['running', 'another-request']) this.keyConflicts.inc({ reason }, 0);
    // Event-loop lag, heap, GC, CPU, memory, handles: prom-client's standard names (process_*, nodejs_*).
    collectDefaultMetrics({ register: this.registry });
  }

  /** Observes one committed batch of writes (given to the store as its CommitObserver). */
  readonly onCommit: CommitObserver = (batchSize, seconds) => {
    this.batchSize.observe(batchSize);
    this.commitSeconds.observe(seconds);
  };

  /** Told by the change feed of its streams (given to it as its FeedObserver). */
  readonly feed: FeedObserver = {
    streams: (open) => this.streams.set(open),
    sent: (events) => this.eventsSent.inc(events),
  };

  /** Told of what Idempotency-Keys did (given to the app as its IdempotencyObserver). */
  readonly idempotency: IdempotencyObserver = {
    replayed: () => this.replays.inc(),
    conflict: (reason) => this.keyConflicts.inc({ reason }),
  };

  /** Adds `plant_store_idempotency_keys`, read from the store at every scrape: the outcomes kept now, shared by every instance. */
  watchIdempotencyKeys(count: () => Promise<number>): void {
    this.storeGauge('plant_store_idempotency_keys', 'Outcomes kept under Idempotency-Keys now (not expired), as the database holds them', () =>
      withTimeout(count(), BACKLOG_TIMEOUT_MS),
    );
  }

  /** Counts one webhook delivery attempt by what the dispatcher decided of it. */
  readonly onDeliveryAttempt = (record: Pick<AttemptRecord, 'outcome'>): void => {
    this.deliveries.inc({ outcome: record.outcome });
  };

  /**
   * Adds `plant_store_webhook_backlog`, read from the store at every scrape (the count lives in the database,
   * shared by every instance and worker: workers' values are not added up but the largest taken).
   */
  watchBacklog(countPending: () => Promise<number>): void {
    this.storeGauge(
      'plant_store_webhook_backlog',
      'Webhook messages waiting for delivery (pending, of every endpoint), as the database holds them',
      () => withTimeout(countPending(), BACKLOG_TIMEOUT_MS),
    );
  }

  /**
   * Adds `plant_store_search_index_lag_events` and `…_lag_seconds`, read from the store at every scrape:
   * how far the search index is behind the committed writes (on SQLite, where it follows them; always 0 on
   * PostgreSQL). Searches are exact whatever the lag; a lag that grows says the index is not keeping up.
   */
  watchSearchIndex(lag: () => Promise<{ events: number; ms: number }>): void {
    let last: Promise<{ events: number; ms: number }> | undefined;
    // One read of the store per scrape for both gauges: the first to collect reads, the second reuses it.
    const read = () => (last ??= withTimeout(lag(), BACKLOG_TIMEOUT_MS).finally(() => setImmediate(() => (last = undefined))));
    this.storeGauge(
      'plant_store_search_index_lag_events',
      'Plant changes committed but not yet in the search index (searches read them besides it)',
      () => read().then((l) => l.events),
    );
    this.storeGauge('plant_store_search_index_lag_seconds', 'Age of the oldest plant change not yet in the search index, in seconds', () =>
      read().then((l) => l.ms / 1000),
    );
  }

  /**
   * A gauge whose value `read` takes from the store at every scrape; NaN when it fails or times out (a stalled
   * database), rather than failing the scrape. The count lives in the database, shared by every instance and
   * worker: workers' values are not added up but the largest taken.
   */
  private storeGauge(name: string, help: string, read: () => Promise<number>): void {
    new Gauge({
      name,
      help,
      aggregator: 'max',
      registers: [this.registry],
      async collect() {
        this.set(await read().catch(() => NaN));
      },
    });
  }

  /** The registry in the Prometheus text format (what the listener serves). */
  readonly scrape: Scrape = async () => ({ contentType: this.registry.contentType, body: await this.registry.metrics() });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
