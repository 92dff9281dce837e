import type { FastifyBaseLogger } from 'fastify';
import { goneReason } from '../model/delivery-reasons.js';
import type { AttemptRecord, DueMessage, WebhookStore } from '../store/webhook-store.js';
import type { AttemptOutcome } from './delivery.js';

/**
 * What becomes of an attempt to deliver a message: what is recorded of it (delivered, retried by the
 * schedule, failed), and the recording itself, several attempts to one store call.
 */

/** Jitter: each wait is lengthened by up to this share, never shortened. */
const JITTER = 0.1;
/**
 * Attempts are recorded together: once this many have finished, or this long after the first of them
 * (each store call is a write of its own; a few ms later costs nothing, since a message is leased).
 */
const RECORD_BATCH = 32;
const RECORD_DELAY_MS = 10;

/** What to record of an attempt: delivered on a 2xx; 410 disables the endpoint; else a retry by the schedule, or failed when it is spent. */
export function decide(
  message: Pick<DueMessage, 'seq' | 'endpointId' | 'roundAttempts'>,
  outcome: AttemptOutcome,
  settings: { retrySchedule: readonly number[] },
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

/** Records attempts as they finish, RECORD_BATCH to a store call, or RECORD_DELAY_MS after the first of a call. */
export class AttemptRecorder {
  private records: AttemptRecord[] = [];
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Pick<WebhookStore, 'recordAttempts'>,
    /** WEBHOOK_DISABLE_AFTER_HOURS, in ms. */
    private readonly disableAfterMs: number,
    private readonly log: Pick<FastifyBaseLogger, 'error'>,
  ) {}

  add(record: AttemptRecord): void {
    this.records.push(record);
    if (this.records.length >= RECORD_BATCH) void this.flush();
    else
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        void this.flush();
      }, RECORD_DELAY_MS).unref();
  }

  /** Records the attempts gathered so far in one store call; attempts that finish meanwhile go in the next. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.flushing) return this.flushing.then(() => this.flush());
    if (this.records.length === 0) return Promise.resolve();
    const records = this.records;
    this.records = [];
    this.flushing = this.store
      .recordAttempts(records, this.disableAfterMs)
      .catch((error: unknown) => {
        // Not recorded: the lease runs out and the messages are sent again (at least once).
        this.log.error({ err: error, attempts: records.length }, 'webhooks: could not record delivery attempts');
      })
      .finally(() => (this.flushing = undefined));
    return this.flushing;
  }
}
