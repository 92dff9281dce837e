import { Type, type TSchema } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { validatorCompiler } from '../http/validation.js';
import { joinProblems, validationProblems } from '../http/validation-messages.js';
import { StoredPlant } from '../model/plant.js';
import { ImportResult, Plant } from '../plants/schema.js';
import { CreatedToken, Token } from '../tokens/schema.js';
import { CreatedEndpoint, Delivery, Endpoint } from '../webhooks/schema.js';

/**
 * What each call the CLI makes through a service promises to answer when it succeeds: its status, and its
 * body's shape (the service's own response schemas), or the media type of a stream. A 2xx is not enough:
 * an address where another program answers, or a proxy's page, would otherwise be taken for success ("revoked
 * token …" when nothing was revoked), or fail in the CLI's own code ("Cannot read properties of undefined").
 * The shape is the schemas' structure alone (types, fields, lists), not their rules (patterns, enums,
 * formats): a newer service's new scope, or a token named before a rule was tightened, is still an answer.
 */

/** A call: its method and path, as the CLI names them (api.ts's ApiPath). */
export type Operation = `${'get' | 'post' | 'delete'} ${string}`;

interface Promised {
  status: number;
  /** What the body is, in words, for a message: "a token", "a list of plants". */
  what: string;
  /** The body's schema: undefined for an answer without one (204), or a stream (its media type is checked). */
  schema?: TSchema;
}

const PROMISES: Readonly<Record<string, Promised>> = {
  'post /tokens': { status: 201, what: 'a new token', schema: CreatedToken },
  'get /tokens': { status: 200, what: 'a list of tokens', schema: Type.Array(Token) },
  'delete /tokens/{id}': { status: 204, what: 'no content' },
  'post /plants': { status: 200, what: 'a plant', schema: Plant },
  'get /plants/{id}': { status: 200, what: 'a plant', schema: StoredPlant },
  'delete /plants/{id}': { status: 204, what: 'no content' },
  'get /plants': { status: 200, what: 'a list of plants', schema: Type.Array(StoredPlant) },
  'post /plants/import': { status: 200, what: 'the counts of an import', schema: ImportResult },
  'post /webhooks': { status: 201, what: 'a new webhook endpoint', schema: CreatedEndpoint },
  'get /webhooks': { status: 200, what: 'a list of webhook endpoints', schema: Type.Array(Endpoint) },
  'delete /webhooks/{id}': { status: 204, what: 'no content' },
  'get /webhooks/{id}/deliveries': { status: 200, what: 'a list of deliveries', schema: Type.Array(Delivery) },
};

/** A schema's structure: types, fields, lists and choices; int64 integers stay int64 (a bigint is an integer). */
function structure(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(structure);
  if (schema === null || typeof schema !== 'object') return schema;
  const source = schema as Record<string, unknown>;
  const kept: Record<string, unknown> = {};
  for (const key of ['type', 'required', 'anyOf', 'items'] as const) if (source[key] !== undefined) kept[key] = structure(source[key]);
  if (source.properties !== undefined) {
    kept.properties = Object.fromEntries(
      Object.entries(source.properties as Record<string, unknown>).map(([name, value]) => [name, structure(value)]),
    );
  }
  if (source.format === 'int64') kept.format = 'int64';
  return kept;
}

const validators = new Map<string, ValidateFunction>();

function validatorOf(operation: string, schema: TSchema): ValidateFunction {
  let validate = validators.get(operation);
  if (validate === undefined) {
    validate = validatorCompiler({ schema: structure(schema) as TSchema, method: 'GET', url: operation, httpPart: 'body' }) as ValidateFunction;
    validators.set(operation, validate);
  }
  return validate;
}

/** The operation as a message names it: `POST /tokens`. */
function named(operation: Operation): string {
  const [method = '', path = ''] = operation.split(' ');
  return `${method.toUpperCase()} ${path}`;
}

const JSON_TYPE = /^application\/(?:[^\s;/]+\+)?json/i;

/**
 * Undefined when a 2xx answer is what `operation` promises; else the words of how it is not (the caller
 * adds where it came from and what is not known). `mediaType`: a stream's (an export's), when asked for one.
 */
export function unlikePromised(operation: Operation, response: Response, data: unknown, mediaType?: string): string | undefined {
  const promise = PROMISES[operation];
  if (promise === undefined) return undefined;
  const type = response.headers.get('content-type') ?? '';
  const answered = `${response.status}${type === '' ? '' : ` (${type.split(';', 1)[0]!.trim()})`}`;
  if (response.status !== promise.status) return `${named(operation)} was answered ${answered}, where the service answers ${promise.status}`;
  if (mediaType !== undefined) {
    if (type.split(';', 1)[0]!.trim().toLowerCase() === mediaType) return undefined;
    return `${named(operation)} was answered with ${type === '' ? 'no media type' : type}, where the service answers ${mediaType}`;
  }
  if (promise.schema === undefined) return undefined;
  if (!JSON_TYPE.test(type)) return `${named(operation)} was answered ${answered}, not with ${promise.what} as JSON`;
  const validate = validatorOf(operation, promise.schema);
  if (validate(data)) return undefined;
  return `${named(operation)} was answered with JSON that is not ${promise.what} (${joinProblems(validationProblems('answer', validate.errors ?? []))})`;
}
