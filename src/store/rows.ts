import type { Scope } from '../model/scopes.js';
import { toPlantId, type PlantId } from '../model/plant-id.js';
import type { EventType } from '../model/events.js';
import type { TokenRecord } from './store.js';
import type { StoredPlant } from '../model/plant.js';
import type { MessageStatus, WebhookEndpoint, WebhookMessage } from './webhook-store.js';

/**
 * Rows as both stores read them, once each store's driver has given them JavaScript values (ids as
 * bigint or decimal text, times as epoch milliseconds), and how they become what the store answers.
 */

/** A plants row: its id exact (bigint from SQLite's safeIntegers, decimal text from PostgreSQL). */
export interface PlantRow<Id extends bigint | string = bigint | string> {
  id: Id;
  name: string;
  tag: string | null;
}

/** A plant with its tag left out when it has none. */
export function plantOf(id: PlantId, name: string, tag: string | null): StoredPlant {
  return tag === null ? { id, name } : { id, name, tag };
}

export function toPlant(row: PlantRow): StoredPlant {
  return plantOf(toPlantId(row.id), row.name, row.tag);
}

export interface TokenRow {
  id: string;
  name: string;
  /** Space-separated. */
  scopes: string;
  /** RFC 3339. */
  created_at: string;
  revoked_at: string | null;
}

export function toToken(row: TokenRow): TokenRecord {
  return { id: row.id, name: row.name, scopes: row.scopes.split(' ') as Scope[], createdAt: row.created_at, revokedAt: row.revoked_at };
}

export interface EndpointRow {
  id: string;
  url: string;
  events: EventType[];
  description: string | null;
  /** Whether its bodies write int64 values as strings (`int64: "string"`). */
  int64_strings: boolean;
  enabled: boolean;
  disabled_reason: string | null;
  previous_secret_until: number | null;
  created_at: number;
}

export function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    ...(row.description === null ? {} : { description: row.description }),
    ...(row.int64_strings ? { int64: 'string' as const } : {}),
    enabled: row.enabled,
    ...(row.disabled_reason === null ? {} : { disabledReason: row.disabled_reason }),
    ...(row.previous_secret_until === null ? {} : { previousSecretUntil: row.previous_secret_until }),
    createdAt: row.created_at,
  };
}

export interface MessageRow {
  event_id: string;
  type: string;
  /** The body sent (model/events.ts eventBody): `{"type":…,"timestamp":…,"data":{"id":…`. */
  payload: string;
  status: string;
  attempts: number;
  occurred_at: number;
  last_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: number | null;
}

/** The plant an event is about: the first id of its body, which eventBody writes first in `data`, exact. */
const PLANT_ID = /"data":\{"id":(-?\d+)/;

export function toMessage(row: MessageRow): WebhookMessage {
  const plantId = PLANT_ID.exec(row.payload)?.[1];
  if (plantId === undefined) throw new Error(`webhook message ${row.event_id} has no plant id in its body`);
  return {
    id: row.event_id,
    type: row.type as EventType,
    plantId: toPlantId(plantId),
    status: row.status as MessageStatus,
    attempts: row.attempts,
    occurredAt: row.occurred_at,
    lastAttemptAt: row.last_attempt_at,
    lastStatus: row.last_status,
    lastError: row.last_error,
    nextAttemptAt: row.next_attempt_at,
  };
}
