import { Query } from '../http/strict-query.js';
import { ConditionalReadHeaders, IfMatchWriteHeaders } from '../http/caching.js';
import { ENTITY_TAGS } from '../http/conditional.js';
import { CursorParam } from '../http/cursors.js';
import { IdempotencyKeyHeaders } from '../http/idempotency.js';
import { PreferHandlingHeaders } from '../http/unknown-fields.js';
import { Type, type Static } from '@sinclair/typebox';
import { Int64, STORABLE_TEXT } from '../model/plant.js';
import { EVENT_TYPES, type EventType } from '../model/events.js';
import type { Int64Form } from '../store/webhook-store.js';
import { URL_MAX_LENGTH } from './network-guard.js';

/**
 * The webhook resource's schemas: validation, serialization, the OpenAPI document and the types below.
 */

export const DESCRIPTION_MAX = 1000;
export const PAGE_LIMIT_MAX = 1000;
export const PAGE_LIMIT_DEFAULT = 100;

const EventTypeSchema = Type.Unsafe<EventType>({ type: 'string', enum: [...EVENT_TYPES], description: 'An event type' });
const Events = Type.Array(EventTypeSchema, { minItems: 1, uniqueItems: true, description: 'The events sent to this endpoint' });
const Url = Type.String({
  maxLength: URL_MAX_LENGTH,
  description:
    'Where deliveries are POSTed: an absolute http(s) URL whose host resolves to public addresses only, kept in the form the WHATWG URL parser gives it (its href)',
});
const Description = Type.String({ maxLength: DESCRIPTION_MAX, pattern: STORABLE_TEXT, description: 'Free text for people' });
const Time = (description: string) => Type.String({ format: 'date-time', description });

export const INT64_FORMS = ['number', 'string'] as const satisfies readonly Int64Form[];
/**
 * How the endpoint's delivery bodies write int64 values (the plant's `data.id`): the words of `Prefer:
 * int64=string`, which does the same for the API's answers (docs/api.md, "Ids for JavaScript").
 */
const Int64Setting = (description: string) => Type.Unsafe<Int64Form>({ type: 'string', enum: [...INT64_FORMS], description, examples: ['string'] });
const INT64_CHOICE =
  '`string` writes them as JSON strings (`"id":"9007199254740993"`), which JavaScript\'s JSON.parse keeps exact; `number` as JSON integers, as the specification writes ids';

export const NewEndpoint = Type.Object(
  {
    url: Url,
    events: Type.Optional(Events),
    description: Type.Optional(Description),
    int64: Type.Optional(Int64Setting(`How its delivery bodies write int64 values (the plant's id): ${INT64_CHOICE}. Default: number`)),
  },
  { description: 'NewWebhookEndpoint' },
);
export type NewEndpoint = Static<typeof NewEndpoint>;

export const EndpointPatch = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    int64: Type.Optional(
      Int64Setting(`How its delivery bodies write int64 values from the next attempt on, retries and replays included: ${INT64_CHOICE}`),
    ),
    enabled: Type.Optional(Type.Boolean({ description: 'false pauses deliveries; true resumes them (pending messages flow again)' })),
  },
  { description: 'WebhookEndpointPatch' },
);
export type EndpointPatch = Static<typeof EndpointPatch>;

const endpointFields = {
  id: Type.String({ description: 'The endpoint id' }),
  url: Url,
  events: Events,
  description: Type.Optional(Description),
  int64: Type.Optional(
    Type.Unsafe<'string'>({
      type: 'string',
      enum: ['string'],
      description: 'Present when its delivery bodies write int64 values as JSON strings; absent: as JSON integers (number, the default)',
    }),
  ),
  enabled: Type.Boolean(),
  disabledReason: Type.Optional(Type.String({ description: 'Why the service disabled it (410 Gone, failing too long)' })),
  previousSecretUntil: Type.Optional(
    Time(
      'After a rotation of its secret: until when deliveries carry a signature with the previous secret too (a past time once only the new one signs). Absent when never rotated; each rotation sets it, so the ETag changes with the secret',
    ),
  ),
  createdAt: Time('When it was registered'),
};

export const Endpoint = Type.Object(endpointFields, { description: 'WebhookEndpoint' });
export type Endpoint = Static<typeof Endpoint>;

export const Secret = Type.String({
  pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
  description: 'The signing secret: whsec_ and base64 of 32 random bytes. Shown only when made.',
});

export const CreatedEndpoint = Type.Object({ ...endpointFields, secret: Secret }, { description: 'CreatedWebhookEndpoint' });
export const RotatedSecret = Type.Object({ secret: Secret }, { description: 'RotatedSecret' });

/** An endpoint's id: ep_ and a ULID. Any other form is a 400 naming the parameter; a right-form id no endpoint has, a 404. */
export const ENDPOINT_ID = '^ep_[0-9A-HJKMNP-TV-Z]{26}$';

/** An endpoint id's form, in a path or a query (its words for a 400). */
const ENDPOINT_ID_FORM = { pattern: ENDPOINT_ID, patternMeaning: 'must be a webhook endpoint id: ep_ and 26 letters and digits' };

export const EndpointIdParams = Type.Object({
  id: Type.String({
    ...ENDPOINT_ID_FORM,
    description: 'The endpoint id',
    examples: ['ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C'],
  }),
});

export const EndpointListQuery = Query({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_LIMIT_MAX, default: PAGE_LIMIT_DEFAULT, description: 'The most to return' })),
  cursor: Type.Optional(CursorParam()),
  after: Type.Optional(
    Type.String({
      ...ENDPOINT_ID_FORM,
      description: 'The id of the last endpoint of the previous page: an alias of the cursor, kept for the clients that use it. Not with `cursor`',
    }),
  ),
});

/** A webhook-id: msg_ and a ULID (time-ordered). */
export const WEBHOOK_ID = '^msg_[0-9A-HJKMNP-TV-Z]{26}$';

export const MESSAGE_STATUSES = ['pending', 'delivered', 'failed'] as const;

export const DeliveryQuery = Query({
  cursor: Type.Optional(CursorParam('status')),
  status: Type.Optional(Type.Unsafe<(typeof MESSAGE_STATUSES)[number]>({ type: 'string', enum: [...MESSAGE_STATUSES] })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_LIMIT_MAX, default: PAGE_LIMIT_DEFAULT, description: 'The most to return' })),
  after: Type.Optional(
    Type.String({
      pattern: WEBHOOK_ID,
      patternMeaning: 'must be a webhook-id: msg_ and 26 letters and digits',
      description:
        'The webhook-id of the last message of the previous page (the next page holds older ones): an alias of the cursor, kept for the clients that use it. Not with `cursor`',
    }),
  ),
});

export const Delivery = Type.Object(
  {
    id: Type.String({ description: 'The webhook-id of the message' }),
    type: EventTypeSchema,
    occurredAt: Time("When the change committed: the event's timestamp, which replays select by"),
    plantId: Int64({ description: 'The id of the plant the event is about', examples: [1] }),
    status: Type.Unsafe<(typeof MESSAGE_STATUSES)[number]>({ type: 'string', enum: [...MESSAGE_STATUSES] }),
    attempts: Type.Integer({ minimum: 0 }),
    lastAttemptAt: Type.Union([Time('When it was last sent'), Type.Null()]),
    lastStatus: Type.Union([Type.Integer({ description: "The receiver's HTTP status" }), Type.Null()]),
    lastError: Type.Optional(Type.String({ description: 'Why the last attempt failed' })),
    nextAttemptAt: Type.Optional(Time('When it is sent next (pending messages)')),
  },
  { description: 'WebhookDelivery' },
);
export type Delivery = Static<typeof Delivery>;

export const ReplayRequest = Type.Object(
  {
    since: Time('Failed messages whose event happened at or after this are sent again'),
    until: Type.Optional(Time('… and at or before this (default: now)')),
  },
  { description: 'WebhookReplay' },
);
export const ReplayResult = Type.Object({ requeued: Type.Integer({ minimum: 0 }) }, { description: 'WebhookReplayResult' });

/** The headers of the POST routes with a body: the Idempotency-Key, and Prefer: handling for its unknown fields. */
export const KeyedBodyHeaders = Type.Object({ ...IdempotencyKeyHeaders, ...PreferHandlingHeaders });
/** PATCH's: Prefer: handling for its body's unknown fields. */
export const PatchHeaders = Type.Object({ ...PreferHandlingHeaders, ...IfMatchWriteHeaders });
/** DELETE: If-Match, to delete the endpoint only as it was read. */
export const DeleteHeaders = Type.Object({ ...IfMatchWriteHeaders });
/**
 * If-Match on the POSTs under an endpoint (rotate-secret, replay), which have no representation of their
 * own: judged against the endpoint's, the ETag of GET /webhooks/{id}, as PATCH's is.
 */
const IfMatchEndpointHeaders = {
  'if-match': Type.Optional(
    Type.String({
      description:
        'Only if the endpoint is at one of these ETags (as GET /webhooks/{id} gives them: strong comparison), or `*`: otherwise 412, nothing done. Judged in the write, once the endpoint is found (a missing one is 404)',
      ...ENTITY_TAGS,
    }),
  ),
};
/** POST …/rotate-secret: the Idempotency-Key, and If-Match to rotate only the secret of the endpoint as read. */
export const RotateHeaders = Type.Object({ ...IdempotencyKeyHeaders, ...IfMatchEndpointHeaders });
/** POST …/replay: KeyedBodyHeaders, and If-Match to replay only to the endpoint as read (its URL, its events). */
export const ReplayHeaders = Type.Object({ ...IdempotencyKeyHeaders, ...PreferHandlingHeaders, ...IfMatchEndpointHeaders });
/** The reads: If-None-Match, for a 304 while the answer is the same. */
export const ReadHeaders = Type.Object({ ...ConditionalReadHeaders });
