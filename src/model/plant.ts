import { Type, type Static } from '@sinclair/typebox';
import type { PlantId } from './plant-id.js';

export type { PlantId } from './plant-id.js';

/**
 * A plant, as the whole service knows it: the store keeps it, the routes validate and answer it. The
 * schemas here are the one source of its fields' rules and of the StoredPlant type; the HTTP shapes built
 * from them (requests, queries, headers) are in plants/schema.ts.
 */

export const NAME_MAX = 256;
export const TAG_MAX = 64;

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
export const Name = Type.String({
  minLength: 1,
  maxLength: NAME_MAX,
  pattern: STORABLE_TEXT,
  description: 'The name of the plant',
  examples: ['Monstera'],
});
export const Tag = Type.String({
  maxLength: TAG_MAX,
  pattern: STORABLE_TEXT,
  description: 'Tag that specifies the type of the plant',
  examples: ['tropical'],
});
export const Id = Int64({ description: 'Identification number of the plant', examples: [1] });

/**
 * A plant as the store keeps it and as every operation but the specified POST answers it. (`Plant`, in
 * this code as in the specification, is what POST /plants answers: the name and tag, no id; plants/schema.ts.)
 */
export const StoredPlant = Type.Object({ id: Id, name: Name, tag: Type.Optional(Tag) }, { description: 'StoredPlant' });
export type StoredPlant = Static<typeof StoredPlant>;
