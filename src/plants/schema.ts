import { ConditionalReadHeaders } from '../http/caching.js';
import { ENTITY_TAGS } from '../http/conditional.js';
import { CursorParam } from '../http/cursors.js';
import { Query } from '../http/strict-query.js';
import { IdempotencyKeyHeaders } from '../http/idempotency.js';
import { PreferHandlingHeaders } from '../http/unknown-fields.js';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { PLANT_SORTS, type PlantSort } from '../store/store.js';
import { Id, Int64, Name, StoredPlant, STORABLE_TEXT, Tag, TAG_MAX } from '../model/plant.js';

/**
 * The plant resource's HTTP schemas, built from the plant's own (model/plant.ts): the one source for request
 * validation, answer serialization, the OpenAPI document and the TypeScript types below.
 */

export const LIST_LIMIT_MAX = 1000;
export const LIST_LIMIT_DEFAULT = 100;
/** q: 1 to this many characters (code points). */
export const SEARCH_MAX = 100;
/** tag: given at most this many times. */
export const LIST_TAGS_MAX = 20;
/** GET /plants?id=…: at most this many ids (batch-read.ts). */
export const BATCH_MAX = 100;

/** The specification's Plant: what POST /plants answers. It has no id. */
export const Plant = Type.Object({ name: Name, tag: Type.Optional(Tag) }, { description: 'Plant' });

/** The specification's NewPlant: a Plant plus its id. */
export const NewPlant = Type.Object({ name: Name, tag: Type.Optional(Tag), id: Id }, { description: 'NewPlant' });
export type NewPlant = Static<typeof NewPlant>;

/** PUT /plants/{id}: the whole plant; an id, if sent, must be the path's. */
export const PlantReplacement = Type.Object({ name: Name, tag: Type.Optional(Tag), id: Type.Optional(Id) }, { description: 'PlantReplacement' });
export type PlantReplacement = Static<typeof PlantReplacement>;

/** PATCH /plants/{id}: an RFC 7396 merge patch; `"tag": null` removes the tag. */
export const PlantMergePatch = Type.Object(
  { name: Type.Optional(Name), tag: Type.Optional(Type.Union([Tag, Type.Null()])), id: Type.Optional(Id) },
  { description: 'PlantMergePatch' },
);
export type PlantMergePatch = Static<typeof PlantMergePatch>;

export const PlantIdParams = Type.Object({ id: Id });
export type PlantIdParams = Static<typeof PlantIdParams>;

export const ListQuery = Query({
  id: Type.Optional(
    Type.Array(Int64(), {
      minItems: 1,
      maxItems: BATCH_MAX,
      description: `A batch read: the plants with these ids (\`id=1&id=2\`, at most ${BATCH_MAX}), in the order given, each once; a missing one is left out and named in Missing-Ids. Not with q, tag, sort, cursor, after or limit`,
      examples: [[1, 2]],
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: LIST_LIMIT_MAX,
      default: LIST_LIMIT_DEFAULT,
      description: 'The maximum number of results to return',
    }),
  ),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: SEARCH_MAX,
      pattern: STORABLE_TEXT,
      description:
        'Return only the plants whose name contains this text, compared under Unicode case folding (`fern` finds "Boston Fern", `é` finds "É")',
      examples: ['fern'],
    }),
  ),
  tag: Type.Optional(
    Type.Array(Type.String({ maxLength: TAG_MAX, pattern: STORABLE_TEXT }), {
      maxItems: LIST_TAGS_MAX,
      description: `Return only the plants with this tag; repeated (\`tag=a&tag=b\`, at most ${LIST_TAGS_MAX}), with any of them`,
      examples: [['tropical']],
    }),
  ),
  sort: Type.Optional(
    Type.Unsafe<PlantSort>({
      type: 'string',
      enum: [...PLANT_SORTS],
      default: 'id',
      description: 'The order: by id or by name (ties by id), `-` for descending',
    }),
  ),
  cursor: Type.Optional(CursorParam('q, tag and sort')),
  after: Type.Optional(
    Int64({
      description:
        'With sort=id (the default) only: return the plants whose id is greater than this one; an alias of the cursor, kept for the clients that use it. Not with `cursor`',
    }),
  ),
  format: Type.Optional(
    Type.Unsafe<'json' | 'ndjson' | 'csv'>({
      type: 'string',
      enum: ['json', 'ndjson', 'csv'],
      description:
        'json: a page (the default). ndjson or csv: every plant q and tag select, in the sort order, streamed (limit, after and cursor do not apply); the same as Accept',
    }),
  ),
});
export type ListQuery = Static<typeof ListQuery>;

/**
 * Accept chooses among the 200's media types (application/json, application/x-ndjson, text/csv), which the
 * document lists; OpenAPI ignores an Accept parameter, and /docs has a selector of its own for it.
 */
export const ListHeaders = Type.Object({
  ...ConditionalReadHeaders,
  prefer: Type.Optional(Type.String({ description: '`count=exact` adds X-Total-Count, the number of plants q and tag select (of every page)' })),
});

const IfMatch = Type.String({
  description: 'Only if the plant is at one of these versions (its ETags, `"7"`), or `*`: exists. Otherwise 412, nothing changed.',
  ...ENTITY_TAGS,
});
const IfNoneMatchWrite = Type.String({
  description:
    'With `*`, only where no plant exists: PUT and POST only create, PATCH and DELETE answer 412 for a plant that exists. With ETags, only if the plant is at none of these versions (weak comparison: `W/"7"` names `"7"`). Otherwise 412, nothing changed.',
  ...ENTITY_TAGS,
});

export const CreateHeaders = Type.Object({
  'if-none-match': Type.Optional(IfNoneMatchWrite),
  'if-match': Type.Optional(IfMatch),
  ...IdempotencyKeyHeaders,
  ...PreferHandlingHeaders,
});

export const ReadHeaders = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({ description: 'The ETags the client holds, or `*`: 304 Not Modified when one is current', ...ENTITY_TAGS }),
  ),
  'if-match': Type.Optional(
    Type.String({
      description: 'Only if the plant is at one of these versions (strong comparison), or `*`: otherwise 412. Judged before If-None-Match',
      ...ENTITY_TAGS,
    }),
  ),
});

export const ReplaceHeaders = Type.Object({
  'if-match': Type.Optional(IfMatch),
  'if-none-match': Type.Optional(IfNoneMatchWrite),
  ...PreferHandlingHeaders,
});
export const PatchHeaders = Type.Object({
  'if-match': Type.Optional(IfMatch),
  'if-none-match': Type.Optional(IfNoneMatchWrite),
  ...PreferHandlingHeaders,
});
export const DeleteHeaders = Type.Object({ 'if-match': Type.Optional(IfMatch), 'if-none-match': Type.Optional(IfNoneMatchWrite) });

/** POST /plants/import: its body streams, its media type is its format; the Idempotency-Key; Prefer: handling for its rows' unknown fields. */
export const ImportHeaders = Type.Object({ ...IdempotencyKeyHeaders, ...PreferHandlingHeaders });

export const ImportQuery = Query({
  mode: Type.Optional(
    Type.Unsafe<'replace' | 'create-only'>({
      type: 'string',
      enum: ['replace', 'create-only'],
      default: 'replace',
      description: 'replace (the default): existing plants are replaced. create-only: 409, nothing stored, when any id exists',
    }),
  ),
});

export const ImportResult = Type.Object(
  {
    created: Type.Integer({ minimum: 0, description: 'Plants created (distinct ids)' }),
    replaced: Type.Integer({ minimum: 0, description: 'Plants replaced (distinct ids)' }),
  },
  { description: 'ImportResult' },
);

/** The schemas the OpenAPI document names as components. */
export const namedSchemas: ReadonlyArray<readonly [string, TSchema]> = [
  ['NewPlant', NewPlant],
  ['Plant', Plant],
  ['StoredPlant', StoredPlant],
  ['PlantReplacement', PlantReplacement],
  ['PlantMergePatch', PlantMergePatch],
  ['ImportResult', ImportResult],
];
