import { Ajv, type AnySchema, type SchemaValidateFunction, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { isInt64, parseInt64 } from './json.js';

/**
 * Request validators, compiled from the same schemas the OpenAPI document shows. Two things differ
 * from Fastify's default Ajv:
 * - bodies are never coerced: "12", 1.5, null and true are not integers;
 * - `{type: integer, format: int64}` means the whole int64 range exactly. Ajv's integer type only
 *   knows doubles, so such a schema is validated by the `int64` keyword below instead, which takes
 *   the bigints of http/json.ts in bodies and decimal strings in paths and query strings.
 */

const INT64_MESSAGE = 'must be an integer from -9223372036854775808 to 9223372036854775807';

/** Rewrites every int64 subschema to use the int64 keyword. */
function forValidation(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(forValidation);
  if (schema === null || typeof schema !== 'object') return schema;
  const source = schema as Record<string, unknown>;
  if (source.type === 'integer' && source.format === 'int64') {
    const { type: _type, format: _format, ...rest } = source;
    return { ...rest, int64: true };
  }
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) copy[key] = forValidation(value);
  return copy;
}

const INT64_ERROR = [{ keyword: 'int64', message: INT64_MESSAGE, params: {} }];

const bodyInt64: SchemaValidateFunction = (_schema, data) => {
  const valid = isInt64(data);
  if (!valid) bodyInt64.errors = INT64_ERROR;
  return valid;
};

/** In a path or query string the id arrives as text: parse it and put the number in its place. */
const textInt64: SchemaValidateFunction = (_schema, data, _parent, ctx) => {
  const value = typeof data === 'string' ? parseInt64(data) : undefined;
  if (value === undefined || !ctx) {
    textInt64.errors = INT64_ERROR;
    return false;
  }
  ctx.parentData[ctx.parentDataProperty] = value;
  return true;
};

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({ coerceTypes: coerce, allErrors: false, strict: true, strictTypes: false });
  ajv.addKeyword({
    keyword: 'int64',
    schemaType: 'boolean',
    modifying: coerce,
    errors: true,
    validate: coerce ? textInt64 : bodyInt64,
  });
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);

export const validatorCompiler: FastifySchemaCompiler<AnySchema> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  return ajv.compile(forValidation(schema) as AnySchema) as ValidateFunction;
};
