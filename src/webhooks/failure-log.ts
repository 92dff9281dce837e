import type { FastifyBaseLogger } from 'fastify';
import type { AttemptRecord } from '../store/webhook-store.js';
import { timeText } from './views.js';

/** One warning per endpoint at most this often. */
export const FAILURE_LOG_INTERVAL_MS = 60_000;
/** Endpoints remembered at most; beyond, those not warned about within the interval are forgotten. */
const REMEMBERED = 10_000;

/**
 * Failed delivery attempts as warnings, at most one line per endpoint per minute: an operator sees that a
 * receiver is failing without setting LOG_LEVEL=debug, and a dead receiver with thousands of messages
 * being retried does not flood the log. A line counts the attempts that failed since the endpoint's last
 * line (`failedSinceLastLine`); every attempt stays in the endpoint's deliveries log, and at debug level.
 */
export class FailureLog {
  private readonly endpoints = new Map<string, { at: number; failed: number }>();

  constructor(
    private readonly log: Pick<FastifyBaseLogger, 'warn'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** An attempt that was not a success (a retry is due, or the message failed for good). */
  failed(record: AttemptRecord, webhookId: string): void {
    const now = this.now();
    const last = this.endpoints.get(record.endpointId);
    if (last && now - last.at < FAILURE_LOG_INTERVAL_MS) {
      last.failed++;
      return;
    }
    if (this.endpoints.size >= REMEMBERED) this.forgetQuiet(now);
    this.endpoints.set(record.endpointId, { at: now, failed: 0 });
    const next =
      record.outcome === 'retry' && record.nextAttemptAt !== undefined
        ? `retried at ${timeText(record.nextAttemptAt)}`
        : 'no retry left: the message is failed';
    this.log.warn(
      {
        endpoint: record.endpointId,
        webhookId,
        status: record.status,
        error: record.error,
        failedSinceLastLine: last?.failed ?? 0,
      },
      `webhooks: delivery to endpoint ${record.endpointId} failed (${record.error ?? 'failed'}); ${next}`,
    );
  }

  private forgetQuiet(now: number): void {
    for (const [endpoint, last] of this.endpoints) if (now - last.at >= FAILURE_LOG_INTERVAL_MS) this.endpoints.delete(endpoint);
  }
}
