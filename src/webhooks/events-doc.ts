import { Type, type TSchema } from '@sinclair/typebox';
import { Int64, StoredPlant } from '../model/plant.js';
import type { EventType } from '../model/events.js';
import { CreatedEndpoint, Delivery, Endpoint, EndpointPatch, NewEndpoint, ReplayRequest } from './schema.js';

/** The events as the OpenAPI document's top-level `webhooks` describes them: what a receiver gets. */

const Timestamp = Type.String({ format: 'date-time', description: 'When the change committed (RFC 3339, UTC)' });

function envelope(type: EventType, data: TSchema, description: string): TSchema {
  return Type.Object({ type: Type.Literal(type), timestamp: Timestamp, data }, { description, additionalProperties: false });
}

export const PlantCreatedEvent = envelope('plant.created', StoredPlant, 'PlantCreatedEvent');
export const PlantUpdatedEvent = envelope('plant.updated', StoredPlant, 'PlantUpdatedEvent');
export const PlantDeletedEvent = envelope(
  'plant.deleted',
  Type.Object({ id: Int64({ description: 'The id of the plant deleted' }) }),
  'PlantDeletedEvent',
);

export const SIGNING =
  'Standard Webhooks (https://www.standardwebhooks.com): `webhook-signature` is `v1,` and the base64 HMAC-SHA256 of ' +
  '`{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64-decoded part of the endpoint secret after `whsec_`. ' +
  'For 24 hours after a secret rotation it carries two signatures, the new one first, space-separated. Verify with any ' +
  'Standard Webhooks library (npm: standardwebhooks); de-duplicate by `webhook-id` (delivery is at least once, in no set order). ' +
  'An endpoint registered with `"int64": "string"` gets `data.id` as a JSON string (`"9007199254740993"`), signed as sent.';

export interface WebhookEventDoc {
  summary: string;
  body: TSchema;
}

export const WEBHOOK_EVENTS: Record<EventType, WebhookEventDoc> = {
  'plant.created': { summary: 'A plant was created (POST or PUT of a new id, or an import)', body: PlantCreatedEvent },
  'plant.updated': { summary: 'A plant was replaced (POST or PUT of an existing id, or an import) or patched', body: PlantUpdatedEvent },
  'plant.deleted': { summary: 'A plant was deleted', body: PlantDeletedEvent },
};

/** The webhook schemas the OpenAPI document names as components. */
export const webhookSchemas: ReadonlyArray<readonly [string, TSchema]> = [
  ['NewWebhookEndpoint', NewEndpoint],
  ['WebhookEndpoint', Endpoint],
  ['CreatedWebhookEndpoint', CreatedEndpoint],
  ['WebhookEndpointPatch', EndpointPatch],
  ['WebhookDelivery', Delivery],
  ['WebhookReplay', ReplayRequest],
  ['PlantCreatedEvent', PlantCreatedEvent],
  ['PlantUpdatedEvent', PlantUpdatedEvent],
  ['PlantDeletedEvent', PlantDeletedEvent],
];
