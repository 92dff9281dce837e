import { Ajv, type AnySchema, type SchemaValidateFunction, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { isInt64, parseInt64 } from '../model/plant-id.js';
import { isTimestamp } from './timestamps.js';

/**
 * Request validators, compiled from the same schemas the OpenAPI document shows. Three things differ
 * from Fastify's default Ajv:
 * - bodies are never coerced: "12", 1.5, null and true are not integers;
 * - `{type: integer, format: int64}` means the whole int64 range exactly. Ajv's integer type only
 *   knows doubles, so such a schema is validated by the `int64` keyword below instead, which takes
 *   the bigints of http/json.ts in bodies and decimal strings in paths and query strings;
 * - every problem of a request is reported, not just the first (validation-messages.ts words them), at
 *   no cost to a valid request: each schema is compiled twice. The validator that stops at the first
 *   problem, the same code as ever, judges every request; only a request it refuses is run again through
 *   one that collects every problem (compiled when first needed). The list is bounded by the body limit
 *   (and each import row by IMPORT_MAX_ROW_BYTES), and only the first few problems are worded.
 */

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
 * The words are validation-messages.ts's, by keyword.
 */
function keywordError(keyword: 'int64' | 'decimal', data: unknown, inText: boolean) {
  return [{ keyword, params: { given: given(data, inText) }, message: '' }];
}

/**
 * What was given where an integer was due, for the words of the message (validation-messages.ts): a
 * parameter given twice, a whole number (out of range, or in a parameter not in plain digits), or else.
 */
function given(data: unknown, inText: boolean): 'repeated' | 'whole number' | 'other' {
  if (Array.isArray(data)) return 'repeated';
  const whole =
    typeof data === 'bigint' || (typeof data === 'number' && Number.isInteger(data)) || (inText && typeof data === 'string' && /^-?\d+$/.test(data));
  return whole ? 'whole number' : 'other';
}

const bodyInt64: SchemaValidateFunction = (_schema, data) => {
  const valid = isInt64(data);
  if (!valid) bodyInt64.errors = keywordError('int64', data, false);
  return valid;
};

/**
 * In a path or query string the id arrives as text: parse it and put the number in its place. A value
 * already parsed (the second, error-collecting pass over a request the first pass refused) stays valid.
 */
const textInt64: SchemaValidateFunction = (_schema, data, _parent, ctx) => {
  if (typeof data !== 'string') {
    if (isInt64(data)) return true;
    textInt64.errors = keywordError('int64', data, true);
    return false;
  }
  const value = parseInt64(data);
  if (value === undefined || !ctx) {
    textInt64.errors = keywordError('int64', data, true);
    return false;
  }
  ctx.parentData[ctx.parentDataProperty] = value;
  return true;
};

/** Any other integer parameter: decimal digits only, a safe integer, put in place as a number. */
const textDecimal: SchemaValidateFunction = (_schema, data, parentSchema, ctx) => {
  if (typeof data === 'number' && Number.isSafeInteger(data)) return true;
  const value = typeof data === 'string' ? parseInt64(data) : undefined;
  if (typeof value !== 'number' || !ctx) {
    // With the parameter's schema: digits too large for a number are told as the bound they pass.
    textDecimal.errors = [{ ...keywordError('decimal', data, true)[0]!, data, parentSchema }];
    return false;
  }
  ctx.parentData[ctx.parentDataProperty] = value;
  return true;
};

/**
 * Annotations schemas may carry for messages only (validation-messages.ts): what a pattern means in
 * words. The OpenAPI document leaves them out.
 */
export const MESSAGE_ANNOTATIONS = ['patternMeaning'];

/** `all`: the error-collecting pass (every problem, with the schema and data that failed, for the words). */
function makeAjv(coerce: boolean, all: boolean): Ajv {
  // Text parts coerce to the schema's types; 'array' also makes a parameter given once a list of one where
  // the schema wants a list (GET /plants?tag=a, as ?tag=a&tag=b), and nothing else.
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    allErrors: all,
    verbose: all,
    // Each schema is checked against Ajv's meta-schema by the tests (compileEveryValidator), not at every start.
    validateSchema: false,
    strict: true,
    strictTypes: false,
  });
  ajv.addVocabulary(MESSAGE_ANNOTATIONS);
  // RFC 3339 timestamps (`date-time`, with a time zone) in webhook replay windows: the texts the routes
  // read with timestampMillis, so that none passes the check and then reads as NaN (http/timestamps.ts).
  ajv.addFormat('date-time', { type: 'string', validate: isTimestamp });
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

const AJV = {
  body: { first: makeAjv(false, false), all: makeAjv(false, true) },
  text: { first: makeAjv(true, false), all: makeAjv(true, true) },
};

/**
 * Validators by schema and kind of request part, shared by every app of the process: the route schemas
 * are module constants, so an app built again (tests build hundreds) compiles nothing new.
 */
const compiled = new WeakMap<object, Partial<Record<keyof typeof AJV, ValidateFunction>>>();
/** Each validator's compilation, for compileEveryValidator. */
const made: Array<() => void> = [];

/**
 * A route's validator, compiled when it first validates: a process serves a few routes most of the time,
 * and compiling all of them (with Ajv's check of each schema against its meta-schema, now left to the
 * tests) was a quarter of a worker's CPU from start to ready (some 0.4 of 1.6 s). A schema Ajv refuses is a bug of this code, found
 * by test/http/validation-schemas.test.ts, which compiles every route's schemas (compileEveryValidator).
 */
function compile(schema: AnySchema, kind: keyof typeof AJV): ValidateFunction {
  let first: ValidateFunction | undefined;
  let all: ValidateFunction | undefined;
  let preparedSchema: AnySchema | undefined;
  const prepared = () => (preparedSchema ??= forValidation(schema, kind === 'text') as AnySchema);
  const validate = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => {
    first ??= AJV[kind].first.compile(prepared());
    if (first(data, context)) {
      validate.errors = null;
      return true;
    }
    all ??= AJV[kind].all.compile(prepared());
    // The first pass may have put parsed numbers in place of some texts; the keywords above take those as valid.
    all(data, context);
    validate.errors = all.errors ?? first.errors;
    return false;
  }) as ValidateFunction;
  // Fastify passes the parent (so a validator may replace a whole request part) to a function it knows as
  // Ajv's by this field, which it only tests for; Ajv's own is there once the schema is compiled.
  validate.schemaEnv = LAZY_SCHEMA_ENV;
  made.push(() => {
    const checker = AJV[kind].first;
    if (!checker.validateSchema(prepared())) throw new Error(`a route's ${kind} schema: ${checker.errorsText(checker.errors)}`);
    first ??= AJV[kind].first.compile(prepared());
    all ??= AJV[kind].all.compile(prepared());
  });
  return validate;
}

/** What a validator not compiled yet shows as its schemaEnv (see compile). */
const LAZY_SCHEMA_ENV = {} as ValidateFunction['schemaEnv'];

/**
 * Checks each validator made so far: its schema against Ajv's meta-schema, then compiled, both passes (Ajv
 * throws for a schema it refuses in strict mode); how many. For the tests.
 * @internal
 */
export function compileEveryValidator(): number {
  for (const compileNow of made) compileNow();
  return made.length;
}

export const validatorCompiler: FastifySchemaCompiler<AnySchema> = ({ schema, httpPart }) => {
  const kind = httpPart === 'body' ? 'body' : 'text';
  if (typeof schema !== 'object') return compile(schema, kind);
  const known = compiled.get(schema) ?? {};
  compiled.set(schema, known);
  return (known[kind] ??= compile(schema, kind));
};
