import { eventBody, type EventType, type PlantChange } from '../../model/events.js';
import { DISABLED_AT_EVENT } from '../../model/delivery-reasons.js';

/**
 * The outbox on PostgreSQL: a plant write's statement also inserts, in the same statement (a
 * data-modifying CTE) or transaction, one message per endpoint subscribed to its event. The bodies are
 * made here (model/events.ts), the same bytes as on SQLite; the statement picks the right one.
 */

/**
 * SQL that inserts the messages of one event for every subscribed endpoint. `$type`, `$payload` are SQL
 * expressions (parameters or CASEs on the write's result), `from` the rows that exist only if the write
 * changed a plant, `traceparent` the request's trace context (tracing on; NULL otherwise). Messages for a
 * disabled endpoint are failed at once. RETURNING status lets the caller count the messages queued for delivery.
 *
 * FOR KEY SHARE OF e: the lock the foreign key's check takes on each endpoint anyway, taken as the endpoint
 * is read instead of after. An endpoint deleted meanwhile by a transaction that commits first is then
 * passed over (the read waits for it, and finds it gone), where the check found it gone and failed the
 * whole write (a 500 for a plant write racing an endpoint's deletion); one deleted after waits for this.
 */
export function insertMessages(params: {
  type: string;
  payload: string;
  eventId: string;
  at: string;
  from: string;
  traceparent?: string | undefined;
}): string {
  return `INSERT INTO webhook_messages (endpoint_id, event_id, type, payload, occurred_at, status, next_attempt_at, last_error, traceparent)
    SELECT e.id, ${params.eventId}, ${params.type}, ${params.payload}, ${params.at},
           CASE WHEN e.enabled THEN 'pending' ELSE 'failed' END,
           CASE WHEN e.enabled THEN ${params.at} END,
           CASE WHEN e.enabled THEN NULL ELSE '${DISABLED_AT_EVENT}' END, ${params.traceparent ?? 'NULL'}
    FROM ${params.from} JOIN webhook_endpoints e ON ${params.type} = ANY (e.events)
    FOR KEY SHARE OF e
    RETURNING status`;
}

export function bodyFor(type: EventType, plant: PlantChange['plant'], at: number): string {
  return eventBody({ type, plant } as PlantChange, new Date(at));
}
