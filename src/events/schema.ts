import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ConditionalReadHeaders } from '../http/caching.js';
import { CursorParam } from '../http/cursors.js';
import { Query } from '../http/strict-query.js';
import { EVENT_TYPES, type EventType } from '../model/events.js';
import { PlantCreatedEvent, PlantDeletedEvent, PlantUpdatedEvent } from '../webhooks/events-doc.js';

/** The change feed's HTTP schemas: validation, the OpenAPI document and the types below. */

export const FEED_LIMIT_MAX = 1000;
export const FEED_LIMIT_DEFAULT = 100;

/** msg_ and a ULID in Crockford base32 (model/ids.ts). */
export const EVENT_ID_PATTERN = '^msg_[0-9A-HJKMNP-TV-Z]{26}$';

const EventId = (description: string) =>
  Type.String({
    pattern: EVENT_ID_PATTERN,
    patternMeaning: 'must be an event id, msg_ and 26 characters',
    description,
    examples: ['msg_01KAT3Z4K8Q2W5N7X9Y0A1B2C3'],
  });

const EventTypeSchema = Type.Unsafe<EventType>({ type: 'string', enum: [...EVENT_TYPES] });

/** An event of the feed: the webhook body of that event with its id in front. */
function withId(envelope: TSchema, description: string): TSchema {
  return Type.Composite([Type.Object({ id: EventId('The event id: the webhook-id its webhook deliveries carry') }), envelope as never], {
    description,
    additionalProperties: false,
  });
}

export const FeedEventSchema = Type.Union(
  [
    withId(PlantCreatedEvent, 'A plant was created'),
    withId(PlantUpdatedEvent, 'A plant was replaced or patched'),
    withId(PlantDeletedEvent, 'A plant was deleted'),
  ],
  { description: 'Event' },
);

export const EventsQuery = Query({
  cursor: Type.Optional(CursorParam('type')),
  after: Type.Optional(
    EventId(
      'Only the events after this one (410 when it is older than the retention): an alias of the cursor, and where a client starts from an event it has. A stream resumes after Last-Event-ID instead, when sent. Not with `cursor`',
    ),
  ),
  limit: Type.Optional(
    Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: FEED_LIMIT_MAX,
      default: FEED_LIMIT_DEFAULT,
      description: 'The maximum number of events in a page (not for a stream)',
    }),
  ),
  type: Type.Optional(
    Type.Array(EventTypeSchema, {
      minItems: 1,
      uniqueItems: true,
      description: 'Only events of this type; repeat it for several (`type=plant.created&type=plant.deleted`)',
    }),
  ),
  access_token: Type.Optional(
    Type.String({
      description:
        "The bearer token, for a browser's EventSource, which cannot send an Authorization header (RFC 6750 §2.3). " +
        'Never with the header. Only a token limited to events:read is taken so (another is 403: send it in the header); logs show it as [redacted]',
    }),
  ),
});
export type EventsQuery = Static<typeof EventsQuery>;

/**
 * Accept chooses between the 200's media types (application/json, a page; text/event-stream, a stream),
 * which the document lists; OpenAPI ignores an Accept parameter, and /docs has a selector of its own for it.
 */
export const EventsHeaders = Type.Object({
  ...ConditionalReadHeaders,
  'last-event-id': Type.Optional(
    Type.String({
      pattern: '^(msg_[0-9A-HJKMNP-TV-Z]{26})?$',
      patternMeaning: 'must be an event id, msg_ and 26 characters (the id: of an event the stream sent), or empty',
      description: 'A stream resumes after this event (EventSource sends it when it reconnects); it wins over `after`',
    }),
  ),
});
