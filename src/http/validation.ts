import { Ajv, type AnySchema, type ErrorObject, type SchemaValidateFunction, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { isInt64, parseInt64 } from '../plants/id.js';
import { STORABLE_TEXT } from '../plants/plant.js';

/**
 * Request validators, compiled from the same schemas the OpenAPI document shows. Two things differ
 * from Fastify's default Ajv:
 * - bodies are never coerced: "12", 1.5, null and true are not integers;
 * - `{type: integer, format: int64}` means the whole int64 range exactly. Ajv's integer type only
 *   knows doubles, so such a schema is validated by the `int64` keyword below instead, which takes
 *   the bigints of http/json.ts in bodies and decimal strings in paths and query strings.
 */

const INT64_MESSAGE = 'must be an integer from -9223372036854775808 to 9223372036854775807';

/**
 * Rewrites every int64 subschema to use the int64 keyword. In a path or query string (`text`) every
 * other integer is rewritten too, to the `decimal` keyword: Ajv's coercion would take "+5", " 5" and
 * "1e2" for 5 and 100, where a parameter should be plain decimal digits. Keywords beside the type
 * (minimum, maximum) stay and apply to the parsed number.
 */
function forValidation(schema: unknown, text: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((s) => forValidation(s, text));
  if (schema === null || typeof schema !== 'object') return schema;
  const source = schema as Record<string, unknown>;
  if (source.type === 'integer' && source.format === 'int64') {
    const { type: _type, format: _format, ...rest } = source;
    return { ...rest, int64: true };
  }
  if (text && source.type === 'integer') {
    const { type: _type, format: _format, ...rest } = source;
    return { ...rest, decimal: true };
  }
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) copy[key] = forValidation(value, text);
  return copy;
}

/**
 * A fresh error each time: Ajv writes instancePath into the error objects it is given (only when
 * unset), so a shared object would name the first parameter that ever failed in every later message.
 */
function keywordError(keyword: string, data: unknown, message: string) {
  return [{ keyword, message: Array.isArray(data) ? 'must be given once' : message, params: {} }];
}

const bodyInt64: SchemaValidateFunction = (_schema, data) => {
  const valid = isInt64(data);
  if (!valid) bodyInt64.errors = keywordError('int64', data, INT64_MESSAGE);
  return valid;
};

/** In a path or query string the id arrives as text: parse it and put the number in its place. */
const textInt64: SchemaValidateFunction = (_schema, data, _parent, ctx) => {
  const value = typeof data === 'string' ? parseInt64(data) : undefined;
  if (value === undefined || !ctx) {
    textInt64.errors = keywordError('int64', data, INT64_MESSAGE);
    return false;
  }
  ctx.parentData[ctx.parentDataProperty] = value;
  return true;
};

/** Any other integer parameter: decimal digits only, a safe integer, put in place as a number. */
const textDecimal: SchemaValidateFunction = (_schema, data, _parent, ctx) => {
  const value = typeof data === 'string' ? parseInt64(data) : undefined;
  if (typeof value !== 'number' || !ctx) {
    textDecimal.errors = keywordError('decimal', data, 'must be a whole number in decimal digits');
    return false;
  }
  ctx.parentData[ctx.parentDataProperty] = value;
  return true;
};

function makeAjv(coerce: boolean): Ajv {
  // Text parts coerce to the schema's types; 'array' also makes a parameter given once a list of one where
  // the schema wants a list (GET /plants?tag=a, as ?tag=a&tag=b), and nothing else.
  const ajv = new Ajv({ coerceTypes: coerce ? 'array' : false, allErrors: false, strict: true, strictTypes: false });
  // RFC 3339 timestamps (`date-time`, with a time zone) in webhook replay windows.
  addFormats.default(ajv, ['date-time']);
  ajv.addKeyword({
    keyword: 'int64',
    schemaType: 'boolean',
    modifying: coerce,
    errors: true,
    validate: coerce ? textInt64 : bodyInt64,
  });
  if (coerce) ajv.addKeyword({ keyword: 'decimal', schemaType: 'boolean', modifying: true, errors: true, validate: textDecimal });
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);

export const validatorCompiler: FastifySchemaCompiler<AnySchema> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  return ajv.compile(forValidation(schema, httpPart !== 'body') as AnySchema) as ValidateFunction;
};

/**
 * A validation error, phrased with where it happened. For a request part (`body`, `querystring`…) the
 * field is a path: "body.name is required". For a row of an import (`line 17`) it follows a colon:
 * "line 17: name is required".
 */
export function describeValidationError(
  context: string,
  error: Pick<ErrorObject, 'keyword' | 'instancePath' | 'params' | 'message'> | undefined,
): string {
  const row = !/^[a-z]+$/.test(context);
  const field = (error?.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  const at = (name: string) => (row ? `${context}: ${name}` : `${context}.${name}`);
  const where = field === '' ? (row ? `${context}: the row` : context) : at(field);
  if (!error) return `${where} is not valid`;
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required')
    return `${at(field === '' ? String(params.missingProperty) : `${field}.${String(params.missingProperty)}`)} is required`;
  if (error.keyword === 'pattern') {
    // STORABLE_TEXT (plants/schema.ts) is the pattern of free text; say what it means. Others are formats.
    return params.pattern === STORABLE_TEXT
      ? `${where} must not contain U+0000 or an unpaired surrogate`
      : `${where} must match ${String(params.pattern)}`;
  }
  if (error.keyword === 'enum') return `${where} must be one of ${(params.allowedValues as unknown[]).join(', ')}`;
  return `${where} ${error.message ?? 'is not valid'}`;
}
