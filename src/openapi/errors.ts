import type { RouteAuth } from '../http/auth.js';
import { lacksScope, MISSING_TOKEN } from '../http/auth.js';
import { bodyTooLarge, internalError, storeUnavailable, unsupportedMediaType } from '../http/errors.js';
import { tooManyMessage } from '../http/rate-limit.js';

/**
 * The error answers of the OpenAPI document: what each status means, the headers that go with it, and
 * examples with real messages, made by the functions that make the service's own (a 401 reads exactly as
 * the service writes it). A route gives the examples only it knows (`errorExamples`: its 404's, 409's and
 * 412's, a 400 of its body); every operation also has the 400 of an unknown query parameter.
 */

/** What each error status means, for every operation that can answer it. */
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Error response: the request is not valid (the message names each field or parameter and the rule it breaks, up to 10)',
  401: 'Error response: missing, malformed, unknown or revoked bearer token, or an invalid JWT',
  403: 'Error response: the token lacks the scope this operation needs',
  404: 'Error response: nothing with this id',
  409: 'Error response: a conflict with what is stored, nothing changed; or a request with the same Idempotency-Key still runs (retry once it is answered)',
  412: 'Error response: a precondition failed (If-Match names no current version, or If-None-Match: * and the plant exists); nothing changed',
  413: 'Error response: the body is larger than the limit',
  415: 'Error response: the body is not of a media type this operation takes (the message names those it takes)',
  422: 'Error response: the Idempotency-Key was used for another request (method, path, query or body); nothing done',
  429: 'Error response: too many requests from this token (or address, without one) this minute (`RATE_LIMIT_PER_MINUTE`, when set)',
  503: 'Error response: the store is unavailable, or the service is overloaded; retry after Retry-After seconds',
};

const text = (description: string) => ({ description, schema: { type: 'string' } });
/** A header kept until its sunset (docs/api.md, "Deprecations"). */
const deprecated = (description: string) => ({ ...text(description), deprecated: true });

/**
 * Headers that go with a status wherever it is answered. Descriptions are Markdown, as /docs renders
 * them: a literal `<` or `"` stays in a code span, or it would be taken for HTML and vanish.
 */
const STATUS_HEADERS: Record<number, Record<string, { description: string; schema: { type: string }; deprecated?: boolean }>> = {
  401: { 'WWW-Authenticate': text('`Bearer realm="plant-store"`, with `error="invalid_token"` when a token was sent') },
  403: { 'WWW-Authenticate': text('`Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`') },
  429: {
    'Retry-After': text('Seconds until the limit resets'),
    'RateLimit-Policy': text('The policy (draft-ietf-httpapi-ratelimit-headers): `"default";q=<requests per window>;w=60`'),
    RateLimit: text('The budget left: `"default";r=0;t=<seconds until the window resets>`'),
    'RateLimit-Limit': deprecated('Requests allowed per minute (draft 06; use RateLimit-Policy)'),
    'RateLimit-Remaining': deprecated('Requests left this minute: `0` (draft 06; use RateLimit)'),
    'RateLimit-Reset': deprecated('Seconds until the limit resets (draft 06; use RateLimit)'),
  },
  503: { 'Retry-After': text('Seconds to wait before retrying') },
};

/** A request id as the service makes them (app.ts), for the examples that show one. */
const REQUEST_ID = '2kq0a1x3-1f';

/** What an operation's error answers depend on. */
export interface ErrorContext {
  operation: string;
  auth: RouteAuth;
  /** The media types its body may come in (none: it takes no body). */
  accepted: string[] | undefined;
  bodyLimit: number;
  /** Its own examples, by status (errorExamples in its schema). */
  examples: Record<number, string | string[]> | undefined;
}

/** The example messages of one status of one operation. */
function examplesOf(status: number, context: ErrorContext): string[] {
  const own = context.examples?.[status];
  const given = own === undefined ? [] : typeof own === 'string' ? [own] : own;
  if (status === 400) return [...given, 'unknown query parameter "nme"'];
  if (given.length > 0) return given;
  switch (status) {
    case 401:
      return [MISSING_TOKEN];
    case 403:
      if (context.auth !== 'public' && context.auth !== 'token') return [lacksScope(context.auth)];
      break;
    case 413:
      return [bodyTooLarge(context.bodyLimit)];
    case 415:
      return [unsupportedMediaType('text/plain', context.accepted ?? ['application/json'])];
    case 429:
      return [tooManyMessage('token', 600, 42)];
    case 503:
      return [storeUnavailable(REQUEST_ID)];
  }
  throw new Error(`${context.operation}: the OpenAPI document needs an example of its ${status} answer (errorExamples in its schema)`);
}

/** The content of an error answer: the Error shape, and its examples ({"error": 404, "message": "no plant with id 1"}). */
function errorContent(status: number, messages: string[], errorSchema: unknown) {
  const examples = messages.map((message) => ({ error: status, message }));
  return {
    'application/json': {
      schema: errorSchema,
      ...(examples.length === 1
        ? { example: examples[0] }
        : { examples: Object.fromEntries(examples.map((value, i) => [`example${i + 1}`, { summary: value.message, value }])) }),
    },
  };
}

/** One error status of an operation, as the document shows it. */
export function errorResponse(status: number, description: string | undefined, context: ErrorContext, errorSchema: unknown): object {
  const headers = STATUS_HEADERS[status];
  return {
    description: description ?? ERROR_DESCRIPTIONS[status] ?? 'Error response',
    ...(headers && { headers }),
    content: errorContent(status, examplesOf(status, context), errorSchema),
  };
}

/** Any status an operation does not list (404/405 for another path, 500 with its request id…) has the Error shape too. */
export function defaultErrorResponse(errorSchema: unknown): object {
  return {
    description: 'Error response: any other error, e.g. 500 with the request id in the message (the log has the details)',
    content: errorContent(500, [internalError(REQUEST_ID)], errorSchema),
  };
}
