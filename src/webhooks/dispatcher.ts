import type { FastifyBaseLogger } from 'fastify';
import type { AttemptRecord, DueMessage, WebhookStore } from '../store/webhook-store.js';
import type { AttemptOutcome } from './delivery.js';
import { goneReason } from '../model/delivery-reasons.js';
import { FailureLog } from './failure-log.js';

export interface DispatcherSettings {
  /** Deliveries in flight at most (WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** WEBHOOK_TIMEOUT_MS: an attempt's whole time; the lease on a claimed message is longer. */
  timeoutMs: number;
  /** Seconds before each retry (WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule: readonly number[];
  disableAfterHours: number;
  retentionDays: number;
}

/** Looks for due messages (retries, other instances' events) this often, besides being woken by this process's writes. */
const POLL_MS = 1000;
const SWEEP_MS = 3_600_000;
/** A claimed message is left alone by other dispatchers for twice its attempt's timeout plus this: time to send it and record the attempt. */
const LEASE_MARGIN_MS = 1000;
/** Jitter: each wait is lengthened by up to this share, never shortened. */
const JITTER = 0.1;
/** While requests need all the CPU, deliveries go one at a time with this pause between them. */
const YIELD_PAUSE_MS = 50;

/** Whether background work should give way to requests (http/request-pressure.ts); never, by default. */
export interface Yield {
  high: boolean;
  onRelief(listener: () => void): void;
}

/** What to record of an attempt: delivered on a 2xx; 410 disables the endpoint; else a retry by the schedule, or failed when it is spent. */
export function decide(
  message: Pick<DueMessage, 'seq' | 'endpointId' | 'roundAttempts'>,
  outcome: AttemptOutcome,
  settings: Pick<DispatcherSettings, 'retrySchedule'>,
  now: number,
  random: () => number = Math.random,
): AttemptRecord {
  const base = { seq: message.seq, endpointId: message.endpointId, at: now, status: outcome.status, error: outcome.error };
  if (outcome.error === null) return { ...base, outcome: 'delivered' };
  if (outcome.status === 410) return { ...base, outcome: 'failed', disable: goneReason(now) };
  const wait = settings.retrySchedule[message.roundAttempts];
  if (wait === undefined) return { ...base, outcome: 'failed' };
  const delay = Math.max(wait * 1000 * (1 + random() * JITTER), outcome.retryAfterMs ?? 0);
  return { ...base, outcome: 'retry', nextAttemptAt: now + Math.ceil(delay) };
}

/**
 * Delivers the outbox: claims due messages (woken at once by this process's writes, and every second
 * for retries and other instances' events), sends up to `concurrency` at a time, and records each
 * attempt. Memory holds only the messages in flight: a slow or dead receiver grows the database's
 * queue, never this process. The request path never waits for it.
 */
export class Dispatcher {
  private inFlight = 0;
  private claiming = false;
  /** Something may be due: set by a wake-up, cleared by a claim that found less than it asked for. */
  private maybeDue = true;
  private stopped = true;
  private records: AttemptRecord[] = [];
  private flushing: Promise<void> | undefined;
  private timers: NodeJS.Timeout[] = [];
  private drained: Array<() => void> = [];
  private nextClaimAt = 0;
  private pauseTimer: NodeJS.Timeout | undefined;
  private readonly attemptListeners: Array<(record: AttemptRecord) => void> = [];
  /** Failed attempts at warn, one line per endpoint per minute at most. */
  private readonly failures: FailureLog;

  constructor(
    private readonly store: WebhookStore,
    private readonly sender: { send(message: DueMessage): Promise<AttemptOutcome> },
    private readonly settings: DispatcherSettings,
    private readonly log: Pick<FastifyBaseLogger, 'warn' | 'debug' | 'error'>,
    private readonly pressure: Yield = { high: false, onRelief: () => undefined },
    private readonly random: () => number = Math.random,
  ) {
    pressure.onRelief(() => this.wake());
    this.failures = new FailureLog(log);
  }

  /** Calls `listener` with what was decided of each attempt, as it is decided (metrics count them by outcome). */
  onAttempt(listener: (record: AttemptRecord) => void): void {
    this.attemptListeners.push(listener);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.store.onQueued(this.wake);
    this.timers.push(setInterval(this.wake, POLL_MS).unref(), setInterval(() => void this.sweep(), SWEEP_MS).unref());
    void this.sweep();
    this.wake();
  }

  /**
   * Stops claiming, waits up to `graceMs` for the attempts in flight and records those that finished.
   * One still in flight then is sent again once its lease has passed (at least once).
   */
  async stop(graceMs = this.settings.timeoutMs): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    clearTimeout(this.pauseTimer);
    if (this.inFlight > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => this.drained.push(resolve)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs))),
      ]);
      clearTimeout(timer);
    }
    await this.flush();
  }

  readonly wake = (): void => {
    this.maybeDue = true;
    if (this.stopped || this.claiming) return;
    if (this.pressure.high) {
      // Giving way to requests: one claim per pause, however often it is woken.
      const wait = this.nextClaimAt - Date.now();
      if (wait > 0) {
        this.pauseTimer ??= setTimeout(() => {
          this.pauseTimer = undefined;
          this.wake();
        }, wait).unref();
        return;
      }
      this.nextClaimAt = Date.now() + YIELD_PAUSE_MS;
    }
    void this.claim();
  };

  private async claim(): Promise<void> {
    this.claiming = true;
    try {
      while (!this.stopped && this.maybeDue && this.inFlight < this.limit()) {
        this.maybeDue = false;
        const room = this.limit() - this.inFlight;
        const due = await this.store.claimDue(room, 2 * this.settings.timeoutMs + LEASE_MARGIN_MS);
        if (due.length === room) this.maybeDue = true;
        for (const message of due) this.deliver(message);
      }
    } catch (error) {
      // The store is unavailable: the next wake-up (at most POLL_MS away) tries again.
      this.log.warn({ err: error }, 'webhooks: could not claim due messages');
    } finally {
      this.claiming = false;
    }
  }

  /**
   * Deliveries in flight at most now: all of WEBHOOK_CONCURRENCY, or one while the request path needs all
   * the CPU (a delivery costs about as much as a request; the messages wait in the database meanwhile).
   */
  private limit(): number {
    return this.pressure.high ? 1 : this.settings.concurrency;
  }

  private deliver(message: DueMessage): void {
    this.inFlight++;
    void this.sender
      .send(message)
      .then((outcome) => {
        const record = decide(message, outcome, this.settings, Date.now(), this.random);
        for (const listener of this.attemptListeners) listener(record);
        if (outcome.refused) this.log.warn({ endpoint: message.endpointId, ...outcome.refused }, 'webhooks: delivery refused: not a public address');
        if (record.disable) this.log.warn({ endpoint: message.endpointId }, `webhooks: endpoint disabled: ${record.disable}`);
        else if (record.outcome !== 'delivered') {
          this.log.debug({ endpoint: message.endpointId, webhookId: message.eventId, error: record.error }, 'webhooks: attempt failed');
          this.failures.failed(record, message.eventId);
        }
        this.records.push(record);
        void this.flush();
      })
      .finally(() => {
        this.inFlight--;
        if (this.inFlight === 0) for (const resolve of this.drained.splice(0)) resolve();
        // A slot is free: take the next due message, if the last claim suggested there may be one.
        if (this.maybeDue) this.wake();
      });
  }

  /** Records the attempts gathered so far in one store call; attempts that finish meanwhile go in the next. */
  private flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flush());
    if (this.records.length === 0) return Promise.resolve();
    const records = this.records;
    this.records = [];
    this.flushing = this.store
      .recordAttempts(records, this.settings.disableAfterHours * 3_600_000)
      .catch((error: unknown) => {
        // Not recorded: the lease runs out and the messages are sent again (at least once).
        this.log.error({ err: error, attempts: records.length }, 'webhooks: could not record delivery attempts');
      })
      .finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async sweep(): Promise<void> {
    try {
      const deleted = await this.store.deleteExpired(Date.now() - this.settings.retentionDays * 86_400_000);
      if (deleted > 0) this.log.debug({ deleted }, 'webhooks: expired messages deleted');
    } catch (error) {
      this.log.warn({ err: error }, 'webhooks: could not delete expired messages');
    }
  }
}
