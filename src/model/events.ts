import type { PlantId } from './plant-id.js';
import type { StoredPlant } from './plant.js';
import { newId } from './ids.js';

export { EVENT_TYPES, type EventType } from './event-types.js';

/**
 * A change as the store commits it: the plant as stored (created, updated), or its id (deleted); with
 * tracing on, the W3C traceparent of the request that made it, kept with its messages so that their
 * deliveries continue that trace (see docs/metrics-and-tracing.md).
 */
export type PlantChange = ({ type: 'plant.created' | 'plant.updated'; plant: StoredPlant } | { type: 'plant.deleted'; plant: { id: PlantId } }) & {
  traceparent?: string | undefined;
};

/** A webhook-id: the same for every endpoint that gets the event and on every attempt. */
export function newEventId(): string {
  return newId('msg');
}

/**
 * The members of an event body (below) that hold int64 values: the plant's `data.id` (the envelope has
 * none; a plant's name and tag are strings). Written as JSON strings for an endpoint that asks for them
 * so (`"int64": "string"`, webhooks/delivery.ts); a test holds this to the bodies' schemas (format int64).
 */
export const EVENT_INT64_MEMBERS: ReadonlySet<string> = new Set(['id']);

/** The last timestamp written into a body, and its text. */
let lastTime = NaN;
let lastText = '';

/**
 * The body of one event, the Standard Webhooks envelope with exactly three fields:
 * `{"type":…,"timestamp":…,"data":{"id":…,"name":…,"tag":…}}`. Written by hand so that an id beyond
 * 2^53 stays an exact JSON integer (JSON.stringify cannot write a bigint). The same bytes are stored,
 * signed and sent on every attempt.
 */
export function eventBody(change: PlantChange, timestamp: Date): string {
  const { plant } = change;
  // The changes of one commit share their time: its text is made once (toISOString is a large part of a body's cost).
  const ms = timestamp.getTime();
  if (ms !== lastTime) {
    lastText = timestamp.toISOString();
    lastTime = ms;
  }
  const id = typeof plant.id === 'bigint' ? plant.id.toString() : String(plant.id);
  let data = `{"id":${id}`;
  if ('name' in plant) {
    data += `,"name":${JSON.stringify(plant.name)}`;
    if (plant.tag !== undefined) data += `,"tag":${JSON.stringify(plant.tag)}`;
  }
  return `{"type":"${change.type}","timestamp":"${lastText}","data":${data}}}`;
}
