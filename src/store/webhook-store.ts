import type { PlantId } from '../model/plant-id.js';
import type { EventType } from '../model/events.js';

/**
 * What the store keeps for webhooks: the endpoints, and the outbox of messages (one per event and
 * endpoint, written in the same transaction as the change it announces; see store.ts). Times are epoch
 * milliseconds. The dispatcher (webhooks/dispatcher.ts) claims due messages, sends them and records
 * each attempt; the store only keeps state and settles races (a message is claimed by one dispatcher at
 * a time, for a lease).
 */

/**
 * How an endpoint's delivery bodies write int64 values (the plant's `data.id`): JSON integers, as the
 * specification writes ids (the default), or JSON strings, which a JavaScript receiver's JSON.parse keeps
 * exact: the same words as the `Prefer: int64=string` of the API's answers (http/int64-preference.ts).
 */
export type Int64Form = 'number' | 'string';

export interface WebhookEndpoint {
  id: string;
  url: string;
  events: EventType[];
  description?: string;
  /** Present when its bodies write int64 values as strings; absent: as numbers (the default). */
  int64?: 'string';
  enabled: boolean;
  /** Why the service disabled it (410 Gone, failing too long); absent when enabled or disabled by a client. */
  disabledReason?: string;
  /**
   * After a rotation of its secret: until when the previous secret signs deliveries too. Absent when never
   * rotated. Each rotation sets it, so that the endpoint as read (its ETag) changes with its secret.
   */
  previousSecretUntil?: number;
  createdAt: number;
}

export interface NewEndpointRecord {
  id: string;
  url: string;
  events: EventType[];
  description?: string | undefined;
  /** Absent (as in the outcomes an earlier release kept) means 'number'. */
  int64?: Int64Form | undefined;
  secret: string;
  createdAt: number;
}

export interface EndpointChanges {
  url?: string | undefined;
  events?: EventType[] | undefined;
  /** null removes it. */
  description?: string | null | undefined;
  int64?: Int64Form | undefined;
  enabled?: boolean | undefined;
}

export type MessageStatus = 'pending' | 'delivered' | 'failed';

/** One message of an endpoint, as its deliveries log shows it. */
export interface WebhookMessage {
  /** The webhook-id. */
  id: string;
  type: EventType;
  /** The plant the event is about. */
  plantId: PlantId;
  status: MessageStatus;
  attempts: number;
  /** When the change committed (the event's timestamp), epoch ms. */
  occurredAt: number;
  lastAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: number | null;
}

/** A message claimed for delivery, with what sending it needs. */
export interface DueMessage {
  /** The message's key in the outbox. */
  seq: string;
  endpointId: string;
  url: string;
  /** The secrets to sign with: the current one, then the previous one during the day after a rotation. */
  secrets: string[];
  eventId: string;
  /** The body as the outbox keeps it (int64 values as JSON integers). */
  payload: string;
  /** Present when the endpoint asks for int64 values as strings now: each attempt sends the payload so (webhooks/delivery.ts). */
  int64?: 'string';
  /** Attempts since the message was queued or replayed: its place in the retry schedule. */
  roundAttempts: number;
  /** The W3C traceparent of the request whose write queued it (tracing on then): its deliveries continue that trace. */
  traceparent?: string;
}

/** What became of one attempt, as the dispatcher decided it. */
export interface AttemptRecord {
  seq: string;
  endpointId: string;
  at: number;
  /** The receiver's HTTP status, or null when there was no answer. */
  status: number | null;
  error: string | null;
  /** delivered; retry at nextAttemptAt; failed for good; or failed and the endpoint disabled (`disable` says why). */
  outcome: 'delivered' | 'retry' | 'failed';
  nextAttemptAt?: number;
  /** Disable the endpoint at once, with this reason (a 410 Gone answer). */
  disable?: string;
}

export interface MessagePage {
  status?: MessageStatus | undefined;
  limit: number;
  /** The webhook-id of the last message of the previous page: the page holds older ones. */
  after?: string | undefined;
}

export interface WebhookStore {
  createEndpoint(endpoint: NewEndpointRecord): Promise<WebhookEndpoint>;
  getEndpoint(id: string): Promise<WebhookEndpoint | undefined>;
  /** Endpoints in id (creation) order. */
  listEndpoints(page: { limit: number; after?: string | undefined }): Promise<WebhookEndpoint[]>;
  /**
   * Undefined when there is no such endpoint. Enabling clears the reason and the failure streak. With
   * `expected` (the endpoint as a client read it: If-Match), `'changed'` when it is no longer so, judged in
   * the write's own transaction, nothing done.
   */
  updateEndpoint(id: string, changes: EndpointChanges): Promise<WebhookEndpoint | undefined>;
  updateEndpoint(id: string, changes: EndpointChanges, expected: WebhookEndpoint | undefined): Promise<WebhookEndpoint | undefined | 'changed'>;
  /** Deletes the endpoint and its messages; false when there was none; `'changed'` as updateEndpoint says. */
  deleteEndpoint(id: string): Promise<boolean>;
  deleteEndpoint(id: string, expected: WebhookEndpoint | undefined): Promise<boolean | 'changed'>;
  /**
   * Makes `secret` current; the old one keeps signing until `previousUntil`. False when there is no such
   * endpoint; `'changed'` as updateEndpoint says.
   */
  rotateSecret(id: string, secret: string, previousUntil: number): Promise<boolean>;
  rotateSecret(id: string, secret: string, previousUntil: number, expected: WebhookEndpoint | undefined): Promise<boolean | 'changed'>;
  /**
   * The endpoint's messages, newest first (by webhook-id, which orders by event time to the millisecond);
   * `after` pages on from a webhook-id. Undefined when there is no such endpoint.
   */
  listMessages(endpointId: string, page: MessagePage): Promise<WebhookMessage[] | undefined>;
  /**
   * Queues the endpoint's failed messages whose event happened in [since, until] again; undefined when there
   * is no such endpoint; `'changed'` as updateEndpoint says (the endpoint is not changed, but a client may
   * replay only to the endpoint as it read it: its URL, its events).
   */
  replay(endpointId: string, since: number, until: number | undefined): Promise<number | undefined>;
  replay(
    endpointId: string,
    since: number,
    until: number | undefined,
    expected: WebhookEndpoint | undefined,
  ): Promise<number | undefined | 'changed'>;
  /** Claims up to `limit` messages due now on enabled endpoints, each for `leaseMs` (no other dispatcher takes them meanwhile). */
  claimDue(limit: number, leaseMs: number): Promise<DueMessage[]>;
  /** Gives back claimed messages that were not sent: their lease ends now, so any dispatcher may claim them at once. */
  releaseClaims(seqs: readonly string[]): Promise<void>;
  /** Records attempts; a failure starts or extends the endpoint's failure streak, which disables it after `disableAfterMs`. */
  recordAttempts(attempts: AttemptRecord[], disableAfterMs: number): Promise<void>;
  /** Deletes delivered and failed messages whose last attempt (or event, never attempted) is older than `before`. */
  deleteExpired(before: number): Promise<number>;
  /** How many messages wait for delivery (pending, of every endpoint): the backlog. One count on an index, for metrics. */
  countPending(): Promise<number>;
  /** Calls `listener` after each commit of this process that queued messages, so that delivery starts at once. */
  onQueued(listener: () => void): void;
}
