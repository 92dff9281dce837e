import type { FastifyBaseLogger } from 'fastify';
import { StoreUnavailableError } from '../store/store.js';
import type { AttemptRecord, DueMessage, WebhookStore } from '../store/webhook-store.js';
import type { AttemptOutcome } from './delivery.js';
import { AttemptRecorder, decide } from './attempts.js';
import { FailureLog } from './failure-log.js';
import { RetryWakes } from './retry-wakes.js';

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
/** Time to record an attempt after it ends: part of every lease. */
const LEASE_MARGIN_MS = 1000;
/**
 * Messages are claimed ahead of the free slots, up to this many times WEBHOOK_CONCURRENCY claimed and not
 * yet sent: a claim of 32 costs the store about 18 µs a message against 146 for a claim of one (measured
 * in bench/RESULTS.md), and the next messages are at hand the moment a slot frees.
 */
const CLAIM_AHEAD = 2;
/**
 * How long a claimed message may wait for a free slot (its lease is this much longer than an attempt
 * needs): claimed ahead, messages wait a few ms for deliveries to answer, or up to CLAIM_AHEAD ×
 * WEBHOOK_CONCURRENCY × YIELD_PAUSE_MS (about 1.6 s) while deliveries give way to requests.
 */
const READY_WAIT_MS = 5000;
/** While requests need all the CPU, deliveries go one at a time with this pause between them. */
const YIELD_PAUSE_MS = 50;
/**
 * After a claim that found fewer messages than it asked for, the next claim begins this long after it at
 * the earliest, however often writes wake the dispatcher: each claim is a write of its own, cheaper a
 * message the more it takes, and one at each write took one or two messages at a time at moderate write
 * rates (a delivery's CPU with and without the gap: bench/RESULTS.md, 2026-11-30). A lone event after a
 * quiet spell is still claimed at once.
 */
const CLAIM_GAP_MS = 10;

/** A claimed message waiting for a free slot, and the last moment it may still be sent under its lease. */
interface Ready {
  message: DueMessage;
  sendBy: number;
}

/** Whether background work should give way to requests (http/request-pressure.ts); never, by default. */
export interface Yield {
  high: boolean;
  onRelief(listener: () => void): void;
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
  /** Claimed, not sent yet, in claim order. */
  private ready: Ready[] = [];
  private readonly recorder: AttemptRecorder;
  private timers: NodeJS.Timeout[] = [];
  private drained: Array<() => void> = [];
  private nextTakeAt = 0;
  private pauseTimer: NodeJS.Timeout | undefined;
  /** The earliest the next claim may begin (CLAIM_GAP_MS), and the timer set for it. */
  private nextClaimAt = 0;
  private claimTimer: NodeJS.Timeout | undefined;
  private readonly attemptListeners: Array<(record: AttemptRecord) => void> = [];
  /** Failed attempts at warn, one line per endpoint per minute at most. */
  private readonly failures: FailureLog;
  /** A wake-up at each retry due soon (retry-wakes.ts). */
  private readonly retryWakes: RetryWakes;

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
    this.retryWakes = new RetryWakes(this.wake);
    this.recorder = new AttemptRecorder(store, settings.disableAfterHours * 3_600_000, log);
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
   * Stops claiming, gives back the messages claimed and not sent (claimable at once by any dispatcher),
   * waits up to `graceMs` for the attempts in flight and records those that finished. One still in
   * flight then is sent again once its lease has passed (at least once).
   */
  async stop(graceMs = this.settings.timeoutMs): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    // Cleared and forgotten: a dispatcher started again sets them anew.
    clearTimeout(this.pauseTimer);
    clearTimeout(this.claimTimer);
    this.retryWakes.clear();
    this.pauseTimer = this.claimTimer = undefined;
    await this.giveBack(this.ready.splice(0).map((r) => r.message.seq));
    if (this.inFlight > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => this.drained.push(resolve)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs))),
      ]);
      clearTimeout(timer);
    }
    await this.recorder.flush();
  }

  readonly wake = (): void => {
    this.maybeDue = true;
    this.pump();
  };

  /** Sends what is claimed into the free slots, and claims more when few are left. */
  private pump(): void {
    if (this.stopped) return;
    if (this.pressure.high) {
      this.pumpOneAtATime();
      return;
    }
    const { concurrency } = this.settings;
    while (this.inFlight < concurrency) {
      const next = this.take();
      if (!next) break;
      this.deliver(next);
    }
    if (this.maybeDue && !this.claiming && this.ready.length < concurrency) this.claimSoon();
  }

  /** Claims enough to fill the free slots and as many again, at once or at the end of the gap after a claim that found few. */
  private claimSoon(): void {
    if (this.pumpAt(this.nextClaimAt, 'claimTimer')) return;
    void this.claim(CLAIM_AHEAD * this.settings.concurrency - this.ready.length);
  }

  /**
   * Giving way to requests (they need all the CPU; a delivery costs about as much as a request): one
   * delivery at a time with a pause after each, however often it is woken. The messages wait in the
   * database meanwhile.
   */
  private pumpOneAtATime(): void {
    if (this.inFlight > 0) return;
    if (this.pumpAt(this.nextTakeAt, 'pauseTimer')) return;
    const next = this.take();
    if (next) {
      this.nextTakeAt = Date.now() + YIELD_PAUSE_MS;
      this.deliver(next);
    } else if (this.maybeDue && !this.claiming) {
      void this.claim(1);
    }
  }

  /** Whether `at` is still ahead; if so, `timer` (unless already set) pumps again then. */
  private pumpAt(at: number, timer: 'pauseTimer' | 'claimTimer'): boolean {
    const wait = at - Date.now();
    if (wait <= 0) return false;
    this[timer] ??= setTimeout(() => {
      this[timer] = undefined;
      this.pump();
    }, wait).unref();
    return true;
  }

  /** The next claimed message whose lease still covers an attempt; those it no longer covers are given back. */
  private take(): DueMessage | undefined {
    const now = Date.now();
    let expired: string[] | undefined;
    let next: DueMessage | undefined;
    while (next === undefined && this.ready.length > 0) {
      const ready = this.ready.shift()!;
      if (ready.sendBy >= now) next = ready.message;
      else (expired ??= []).push(ready.message.seq);
    }
    if (expired) void this.giveBack(expired);
    return next;
  }

  /**
   * Claims up to `limit` due messages, each leased for its attempt (twice the time-out, then the time to
   * record it) after a wait for a slot behind the others claimed ahead. A message still waiting when that
   * wait is over (slow receivers) is given back rather than sent on a lease too short for its attempt.
   */
  private async claim(limit: number): Promise<void> {
    this.claiming = true;
    this.maybeDue = false;
    const attemptMs = 2 * this.settings.timeoutMs + LEASE_MARGIN_MS;
    const leaseMs = attemptMs + READY_WAIT_MS;
    const startedAt = Date.now();
    try {
      const due = await this.store.claimDue(limit, leaseMs);
      if (due.length === limit) this.maybeDue = true;
      else this.nextClaimAt = startedAt + CLAIM_GAP_MS;
      // The lease started when the claim was made, a little before now.
      const sendBy = Date.now() + READY_WAIT_MS;
      for (const message of due) this.ready.push({ message, sendBy });
      if (this.stopped) await this.giveBack(this.ready.splice(0).map((r) => r.message.seq));
    } catch (error) {
      // The store is unavailable: the next wake-up (at most POLL_MS away) tries again, not the pump below,
      // which would claim again at once and, on a store that fails fast, spin and flood the log.
      // An outage the store reported as it began (logged once then: a full SQLite disk) is not told every second.
      if (!(error instanceof StoreUnavailableError && error.reported)) this.log.warn({ err: error }, 'webhooks: could not claim due messages');
    } finally {
      this.claiming = false;
    }
    this.pump();
  }

  /** Ends the leases of claimed messages that will not be sent here, so that any dispatcher sends them at once. */
  private async giveBack(seqs: string[]): Promise<void> {
    if (seqs.length === 0) return;
    try {
      await this.store.releaseClaims(seqs);
    } catch (error) {
      // Their leases run out instead: sent a little later, still once.
      this.log.warn({ err: error, messages: seqs.length }, 'webhooks: could not give back claimed messages');
    }
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
        this.recorder.add(record);
        if (record.outcome === 'retry' && record.nextAttemptAt !== undefined && !this.stopped) this.retryWakes.at(record.nextAttemptAt);
      })
      .finally(() => {
        this.inFlight--;
        if (this.inFlight === 0) for (const resolve of this.drained.splice(0)) resolve();
        // A slot is free: the next claimed message goes into it.
        this.pump();
      });
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
