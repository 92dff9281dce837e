import type { WebhookEndpoint, WebhookMessage } from '../store/webhook-store.js';
import type { Delivery, Endpoint } from './schema.js';

/** Endpoints and deliveries as the API and the CLI show them: times as RFC 3339, absent fields left out. */

/** The latest instant a Date holds (ECMAScript's time range), in ms. */
const LATEST = 8.64e15;

/**
 * A stored time as RFC 3339, one past the range a Date holds shown as the latest it does: a next attempt
 * stored from a receiver's unbounded Retry-After (before it was bounded) must not fail the deliveries log.
 */
export function timeText(ms: number): string {
  return new Date(Math.max(-LATEST, Math.min(LATEST, ms))).toISOString();
}

export function endpointView({ previousSecretUntil, ...endpoint }: WebhookEndpoint): Endpoint {
  return {
    ...endpoint,
    ...(previousSecretUntil === undefined ? {} : { previousSecretUntil: timeText(previousSecretUntil) }),
    createdAt: timeText(endpoint.createdAt),
  };
}

export function deliveryView(message: WebhookMessage): Delivery {
  return {
    id: message.id,
    type: message.type,
    occurredAt: timeText(message.occurredAt),
    plantId: message.plantId,
    status: message.status,
    attempts: message.attempts,
    lastAttemptAt: message.lastAttemptAt === null ? null : timeText(message.lastAttemptAt),
    lastStatus: message.lastStatus,
    ...(message.lastError === null ? {} : { lastError: message.lastError }),
    ...(message.status === 'pending' && message.nextAttemptAt !== null ? { nextAttemptAt: timeText(message.nextAttemptAt) } : {}),
  };
}
