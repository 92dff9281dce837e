import type { ValidateFunction } from 'ajv';
import { KeysUnavailableError } from '../auth/jwks.js';
import type { RouteAuth } from '../http/auth.js';
import { lacksScope, MISSING_TOKEN } from '../http/auth.js';
import { example, statusOf, type ErrorCode, type ErrorExample } from '../http/error-codes.js';
import { bodyTooLarge, HttpError, internalError, storeBusy, storeUnavailable, unsupportedMediaType } from '../http/errors.js';
import { bothGiven, notMade } from '../http/cursors.js';
import { bodyMediaTypes } from '../http/media-types.js';
import { PROBLEM_JSON, problemDetails } from '../http/problem-details.js';
import { KEY_EXAMPLES } from '../http/idempotency.js';
import { tooManyMessage } from '../http/rate-limit.js';
import { sentMoreThanOnce } from '../http/repeated-headers.js';
import { expectationProblem, targetProblem, transferProblem } from '../http/request-target.js';
import { PARSER_REFUSALS } from '../http/transport.js';
import { unknownFieldsProblem } from '../http/unknown-fields.js';
import { validatorCompiler } from '../http/validation.js';
import { firstProblem, joinProblems, validationProblems } from '../http/validation-messages.js';
import { PATCH_415_HEADERS, STATUS_HEADERS, withOperationHeaders, type HeaderDoc, type SharedHeaders } from './headers.js';

/**
 * The error answers of the OpenAPI document: what each status means, the headers that go with it, the
 * codes each operation may answer (an enum on `code`, per status) and an example of each code, with real
 * messages made by the functions that make the service's own (a 401 reads exactly as the service writes
 * it). A route gives the examples only it knows (`errorExamples`: its 404's, 409's and 412's, a 400 of its
 * body); those every operation of a kind shares (an unknown query parameter, a malformed id, a missing
 * token, the Idempotency-Key's 409 and 422…) are made here from what the route declares.
 */

/** What each error status means, for every operation that can answer it. */
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Error response: the request is not valid (the message names each field or parameter and the rule it breaks, up to 10; `field` the first)',
  401: 'Error response: missing, malformed, unknown or revoked bearer token, or an invalid JWT',
  403: 'Error response: the token lacks the scope this operation needs',
  404: 'Error response: nothing with this id',
  409: 'Error response: a conflict with what is stored, nothing changed; or a request with the same Idempotency-Key still runs (retry once it is answered)',
  412: 'Error response: a precondition failed (If-Match names no current ETag; or, on a write, If-None-Match names the current one, or is * and the plant exists); nothing changed',
  413: 'Error response: the body is larger than the limit',
  415: 'Error response: the body is not of a media type this operation takes (the message names those it takes)',
  417: 'Error response: an `Expect` other than `100-continue`; nothing done',
  422: 'Error response: the Idempotency-Key was used for another request (method, path, query or body); nothing done',
  429: 'Error response: too many requests from this token (or address, without one) this minute (`RATE_LIMIT_PER_MINUTE`, when set)',
  408: 'Error response: the request was not received whole within REQUEST_TIMEOUT_MS; the connection is closed after it',
  414: 'Error response: the request line is too long (the message says how much it and the headers may hold)',
  431: 'Error response: the request headers are too large (the message says how much they and the request line may hold)',
  500: 'Error response: an unexpected fault, the request id in the message (the log has the details)',
  501: 'Error response: the request is sent in a transfer coding this service does not read (any but chunked)',
  503: "Error response: the store is unavailable, or the service is overloaded (or, registering a webhook URL, its host's DNS lookup did not answer in time); retry after Retry-After seconds",
};

/** The 400 of a query string that does not decode, as the service words it (any operation's). */
const BAD_QUERY = targetProblem('/plants?q=%zz')!;

/** A request id as the service makes them (app.ts), for the examples that show one. */
const REQUEST_ID = '2kq0a1x3-1f';

/** What an operation's error answers depend on: what its route declares. */
export interface ErrorContext {
  operation: string;
  method: string;
  auth: RouteAuth;
  /** The media types its body may come in (none: it takes no body). */
  accepted: string[] | undefined;
  /** Its path parameters' schema (its ids), if any. */
  params: unknown;
  /** Its query parameters' and headers' schemas, if any. */
  query: unknown;
  headers: unknown;
  /** Whether its body is a JSON document (not a streamed import), and an object of named fields (unknown fields warned of, or refused). */
  jsonBody: boolean;
  namedFields: boolean;
  /** Whether it takes an Idempotency-Key. */
  keyed: boolean;
  /** The probes are not rate-limited; /healthz is served while overloaded. */
  probe: boolean;
  servesWhenOverloaded: boolean;
  bodyLimit: number;
  /** Its own examples (errorExamples in its schema). */
  examples: readonly ErrorExample[] | undefined;
}

type RequestPart = 'params' | 'querystring' | 'headers';

/**
 * The 400 of a malformed request part, worded by the route's own validator (its code as the error handler
 * gives it: invalid_id for a path id, validation_failed else): every parameter of the part set to each of
 * `tries` in turn, until the validator refuses one; undefined when it takes them all.
 */
function refusedPart(part: RequestPart, schema: unknown, tries: readonly string[]): ErrorExample | undefined {
  const validate = validatorCompiler({ schema, httpPart: part, method: 'GET', url: '/' } as never) as ValidateFunction;
  const names = Object.keys((schema as { properties?: object }).properties ?? {});
  for (const value of tries) {
    if (validate(Object.fromEntries(names.map((name) => [name, value])))) continue;
    const errors = validate.errors ?? [];
    const target = firstProblem(part, errors);
    return example(target?.code ?? 'validation_failed', joinProblems(validationProblems(part, errors)), target?.field);
  }
  return undefined;
}

/** The 400 a malformed path id gets: what the service answers to `/…/no-such-form!`. */
function invalidIdExample(params: unknown): ErrorExample {
  const found = refusedPart('params', params, ['no-such-form!']);
  if (found === undefined)
    throw new Error(
      `a path parameter of ${Object.keys((params as { properties?: object }).properties ?? {}).join(', ')} takes any text: give it the form of its ids (a pattern)`,
    );
  return found;
}

/** Values a query parameter or a header may be sent with that its schema may refuse (a form, a number, a list of choices). */
const MALFORMED = ['no-such-form!', '', '-1'];

/**
 * The refusals of an operation's query parameters and headers: a value its schemas refuse; a cursor it did
 * not make; a cursor with the alias it replaces.
 */
function parameterExamples(context: ErrorContext): ErrorExample[] {
  const found: ErrorExample[] = [];
  for (const [part, schema] of [
    ['querystring', context.query],
    ['headers', context.headers],
  ] as const) {
    const refused = schema === undefined ? undefined : refusedPart(part, schema, MALFORMED);
    if (refused !== undefined) found.push(refused);
  }
  const names = Object.keys((context.query as { properties?: object } | undefined)?.properties ?? {});
  if (names.includes('cursor')) found.push(fromError(notMade('unknown layout')));
  if (names.includes('cursor') && names.includes('after')) found.push(fromError(bothGiven()));
  return found;
}

function fromError(error: HttpError): ErrorExample {
  return example(error.code, error.message, error.field);
}

/** Every example of an operation's error answers: its own, then those of what it declares. */
export function operationExamples(context: ErrorContext): ErrorExample[] {
  const all: ErrorExample[] = [...(context.examples ?? [])];
  const add = (code: ErrorCode, message: string, field?: string) => {
    if (!all.some((known) => known.code === code)) all.push(example(code, message, field));
  };
  add('unknown_parameter', 'unknown query parameter "nme"', 'querystring.nme');
  add('invalid_header', 'the Host header is missing (HTTP/1.1 requires it)', 'headers.host');
  add('invalid_request', BAD_QUERY.message, BAD_QUERY.field);
  add('transfer_coding_unsupported', transferProblem('gzip, chunked')!.message, 'headers.transfer-encoding');
  add('expectation_unsupported', expectationProblem('x-fast-lane')!.message, 'headers.expect');
  if (context.params !== undefined) all.push(invalidIdExample(context.params));
  for (const known of parameterExamples(context)) add(known.code, known.message, known.field);
  // An operation without a body still reads one sent to it (DELETE, a bodiless POST), and refuses what it cannot read.
  const bodiless = context.accepted === undefined && context.method !== 'GET';
  if (context.jsonBody || bodiless) add('invalid_json', 'body is not valid JSON: Unexpected end of JSON input');
  if (context.namedFields) add('unknown_field', unknownFieldsProblem('body', ['colour']), 'body.colour');
  if (context.auth !== 'public') {
    add('unauthorized', MISSING_TOKEN);
    add('header_repeated', sentMoreThanOnce('authorization', 2), 'headers.authorization');
    if (context.auth !== 'token') add('forbidden', lacksScope(context.auth));
    // With JWT_JWKS_URL, a JWT whose keys cannot be fetched.
    add('keys_unavailable', new KeysUnavailableError(1).message);
  }
  add('header_repeated', sentMoreThanOnce('host', 2), 'headers.host');
  if (context.keyed) {
    add('idempotency_key_in_use', KEY_EXAMPLES.running.message);
    add('idempotency_key_reused', KEY_EXAMPLES.reused.message);
  }
  if (context.accepted !== undefined || bodiless) {
    add('body_too_large', bodyTooLarge(context.bodyLimit));
    add('unsupported_media_type', unsupportedMediaType('text/plain', context.accepted ?? bodyMediaTypes(context.method, undefined)));
  }
  if (!context.probe) add('rate_limited', tooManyMessage('token', 600, 42));
  if (!context.servesWhenOverloaded) {
    add('store_unavailable', storeUnavailable(REQUEST_ID));
    if (context.method !== 'GET') add('store_busy', storeBusy(REQUEST_ID));
    add('overloaded', 'the service is overloaded (the event loop lags 812 ms (limit 500 ms)); retry in 2 s');
  }
  // What any request may meet: a fault (Node's parser's refusals are parserResponses').
  add('internal_error', internalError(REQUEST_ID));
  return all;
}

/** The statuses an operation's examples name, for its list of answers. */
export function exampleStatuses(examples: readonly ErrorExample[]): number[] {
  return [...new Set(examples.map((known) => statusOf(known.code)))];
}

/** One example's key: its code, numbered from the second of a code on. */
function exampleKeys(examples: readonly ErrorExample[]): string[] {
  const seen = new Map<string, number>();
  return examples.map(({ code }) => {
    const n = (seen.get(code) ?? 0) + 1;
    seen.set(code, n);
    return n === 1 ? code : `${code}_${n}`;
  });
}

/**
 * The content of an error answer: the Error shape by default (its schema the Error component itself, as the
 * specification gives it), RFC 9457 problem details when asked for them; an example of each code.
 */
function errorContent(examples: readonly ErrorExample[], schemas: { error: unknown; problem: unknown }) {
  const keys = exampleKeys(examples);
  const entries = (shape: (known: ErrorExample) => object): Record<string, object> =>
    Object.fromEntries(examples.map((known, i): [string, object] => [keys[i]!, { summary: `${known.code}: ${known.message}`, value: shape(known) }]));
  return {
    'application/json': {
      schema: schemas.error,
      examples: entries(({ code, message, field }) => ({ error: statusOf(code), message, code, ...(field !== undefined && { field }) })),
    },
    [PROBLEM_JSON]: {
      schema: schemas.problem,
      examples: entries(({ code, message, field }) => problemDetails(code, message, field)),
    },
  };
}

/**
 * One error status of an operation, as the document shows it: `x-error-codes` lists the codes it may carry
 * there (the Error schema stays the specification's, unchanged), each with an example.
 */
export function errorResponse(
  status: number,
  description: string | undefined,
  examples: readonly ErrorExample[],
  schemas: { error: unknown; problem: unknown },
  method: string,
  headers: { own: Record<string, HeaderDoc> | undefined; shared: SharedHeaders; register: (component: string, header: HeaderDoc) => void },
): object {
  const forStatus = status === 415 && method === 'PATCH' ? PATCH_415_HEADERS : STATUS_HEADERS[status];
  const all = withOperationHeaders(forStatus || headers.own ? { ...forStatus, ...headers.own } : undefined, headers.shared, headers.register);
  const own = examples.filter((known) => statusOf(known.code) === status);
  if (own.length === 0) throw new Error(`the OpenAPI document needs an example of the ${status} answer (errorExamples in its schema)`);
  return {
    description: description ?? ERROR_DESCRIPTIONS[status] ?? 'Error response',
    'x-error-codes': [...new Set(own.map((known) => known.code))],
    ...(all && { headers: all }),
    content: errorContent(own, schemas),
  };
}

/**
 * The refusals of Node's HTTP parser (http/transport.ts), which any request may meet before any route or hook
 * sees it: written on the socket in the Error shape (no Accept was read), with none of the headers the steps
 * of a request set; one response each in the document's components, referred to by every operation.
 */
export function parserResponses(schemas: { error: unknown; problem: unknown }): Record<string, { status: number; response: object }> {
  const shown = (code: keyof typeof PARSER_REFUSALS) => {
    const status = statusOf(code);
    const { 'application/json': json } = errorContent([example(code, PARSER_REFUSALS[code])], schemas);
    return { status, response: { description: ERROR_DESCRIPTIONS[status]!, 'x-error-codes': [code], content: { 'application/json': json } } };
  };
  return { RequestTimeout: shown('request_timeout'), UriTooLong: shown('uri_too_long'), HeadersTooLarge: shown('headers_too_large') };
}

/** Any status an operation does not list (404/405 for another path, 500 with its request id…) has the Error shape too. */
export function defaultErrorResponse(
  schemas: { error: unknown; problem: unknown },
  shared: SharedHeaders,
  register: (component: string, header: HeaderDoc) => void,
): object {
  const headers = withOperationHeaders(undefined, shared, register);
  return {
    description: 'Error response: any other error (404 or 405 for a path or method no operation has)',
    ...(headers && { headers }),
    content: errorContent([example('route_not_found', 'no such resource: GET /plantz')], schemas),
  };
}
