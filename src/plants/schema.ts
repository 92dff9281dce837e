import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { PlantId } from './id.js';

export type { PlantId } from './id.js';

/**
 * The plant resource's schemas: the one source for request validation, answer serialization, the
 * OpenAPI document and the TypeScript types below.
 */

export const NAME_MAX = 256;
export const TAG_MAX = 64;
export const LIST_LIMIT_MAX = 1000;
export const LIST_LIMIT_DEFAULT = 100;

/**
 * A 64-bit integer. The validator gives `format: int64` its exact meaning (see http/validation.ts):
 * any JSON integer from -2^63 to 2^63-1, held without losing digits. Its `examples` must be safe
 * integers (within ±(2^53-1)): documentation tools read them as JS numbers and would show others rounded.
 */
export const Int64 = (options: { description?: string; examples?: number[] } = {}) =>
  Type.Unsafe<PlantId>({ type: 'integer', format: 'int64', ...options });

/**
 * Text either store can hold exactly: PostgreSQL's text cannot hold U+0000, and an unpaired UTF-16
 * surrogate has no UTF-8 form (each database would replace it differently). The `u` flag Ajv compiles
 * patterns with makes the class match only unpaired surrogates, so emoji and every other character pass.
 */
export const STORABLE_TEXT = '^[^\\u0000\\uD800-\\uDFFF]*$';

// The examples are what the API reference (/docs) shows and pre-fills; without them it would make up
// strings from the pattern and show 0 for ids.
const Name = Type.String({ minLength: 1, maxLength: NAME_MAX, pattern: STORABLE_TEXT, description: 'The name of the plant', examples: ['Monstera'] });
const Tag = Type.String({
  maxLength: TAG_MAX,
  pattern: STORABLE_TEXT,
  description: 'Tag that specifies the type of the plant',
  examples: ['tropical'],
});
const Id = Int64({ description: 'Identification number of the plant', examples: [1] });

/** The specification's Plant: what POST /plants answers. It has no id. */
export const Plant = Type.Object({ name: Name, tag: Type.Optional(Tag) }, { description: 'Plant' });

/** The specification's NewPlant: a Plant plus its id. */
export const NewPlant = Type.Object({ name: Name, tag: Type.Optional(Tag), id: Id }, { description: 'NewPlant' });
export type NewPlant = Static<typeof NewPlant>;

/** A plant as stored and as every operation but the specified POST answers it. */
export const StoredPlant = Type.Object({ id: Id, name: Name, tag: Type.Optional(Tag) }, { description: 'StoredPlant' });
export type StoredPlant = Static<typeof StoredPlant>;

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

export const ListQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: LIST_LIMIT_MAX,
      default: LIST_LIMIT_DEFAULT,
      description: 'The maximum number of results to return',
    }),
  ),
  after: Type.Optional(Int64({ description: 'Return the plants whose id is greater than this one' })),
  tag: Type.Optional(Type.String({ maxLength: TAG_MAX, pattern: STORABLE_TEXT, description: 'Return only the plants with this tag' })),
  format: Type.Optional(
    Type.Unsafe<'json' | 'ndjson' | 'csv'>({
      type: 'string',
      enum: ['json', 'ndjson', 'csv'],
      description: 'json: a page (the default). ndjson or csv: every plant, streamed (limit and after do not apply); the same as Accept',
    }),
  ),
});
export type ListQuery = Static<typeof ListQuery>;

export const ListHeaders = Type.Object({
  accept: Type.Optional(
    Type.String({ description: 'application/json (a page, the default), application/x-ndjson or text/csv (every plant, streamed)' }),
  ),
  prefer: Type.Optional(Type.String({ description: '`count=exact` adds X-Total-Count, the number of plants (of the tag)' })),
});

const IfMatch = Type.String({
  description: 'Only if the plant is at one of these versions (its ETags, `"7"`), or `*`: exists. Otherwise 412, nothing changed.',
});
const IfNoneMatchCreate = Type.String({ description: 'With `*`, only creates: an existing plant answers 412 and changes nothing.' });

export const CreateHeaders = Type.Object({
  'if-none-match': Type.Optional(IfNoneMatchCreate),
  'if-match': Type.Optional(IfMatch),
});

export const ReadHeaders = Type.Object({
  'if-none-match': Type.Optional(Type.String({ description: 'The ETags the client holds, or `*`: 304 Not Modified when one is current' })),
});

export const ReplaceHeaders = Type.Object({ 'if-match': Type.Optional(IfMatch), 'if-none-match': Type.Optional(IfNoneMatchCreate) });
export const ChangeHeaders = Type.Object({ 'if-match': Type.Optional(IfMatch) });

export const ImportQuery = Type.Object({
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
