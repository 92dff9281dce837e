import type { WebhookEndpoint, WebhookMessage } from '../store/webhook-store.js';
import type { Delivery, Endpoint } from './schema.js';

/** Endpoints and deliveries as the API and the CLI show them: times as RFC 3339, absent fields left out. */

export function endpointView(endpoint: WebhookEndpoint): Endpoint {
  return { ...endpoint, createdAt: new Date(endpoint.createdAt).toISOString() };
}

export function deliveryView(message: WebhookMessage): Delivery {
  return {
    id: message.id,
    type: message.type,
    occurredAt: new Date(message.occurredAt).toISOString(),
    plantId: message.plantId,
    status: message.status,
    attempts: message.attempts,
    lastAttemptAt: message.lastAttemptAt === null ? null : new Date(message.lastAttemptAt).toISOString(),
    lastStatus: message.lastStatus,
    ...(message.lastError === null ? {} : { lastError: message.lastError }),
    ...(message.status === 'pending' && message.nextAttemptAt !== null ? { nextAttemptAt: new Date(message.nextAttemptAt).toISOString() } : {}),
  };
}
