import { Type, type Static } from '@sinclair/typebox';
import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KeysUnavailableError } from '../auth/jwks.js';
import { StoreBusyError, StoreUnavailableError } from '../store/store.js';
import { orList } from '../words.js';
import { statusOf, type ErrorCode } from './error-codes.js';
import { PROBLEM_JSON, problemDetails, wantsProblem } from './problem-details.js';
import { bodyMediaTypes } from './media-types.js';
import { firstProblem, joinProblems, validationProblems, type ProblemTarget } from './validation-messages.js';

/**
 * The specification's Error shape: every error answer of any status has it. `error` and `message` are the
 * specification's (required); `code` and `field` are added, optional in the schema so that the shape stays
 * the specification's (a client that reads `error` and `message` alone reads every answer as before), and
 * sent by every answer of this service (`field` when the refusal concerns one field or parameter).
 */
export const ErrorBody = Type.Object(
  {
    error: Type.Integer({ format: 'int32', description: 'Numeric error value: the HTTP status' }),
    message: Type.String({ description: 'Error message text' }),
    code: Type.Optional(
      Type.String({
        pattern: '^[a-z][a-z0-9_]*$',
        description:
          'Why, for a program: one stable snake_case code per distinct reason (docs/api.md lists them; each operation lists those it may answer). The message may change; the code does not',
        examples: ['not_found'],
      }),
    ),
    field: Type.Optional(
      Type.String({
        description:
          'The field or parameter the refusal concerns, named as the message names it: the request part, then the path (`body.name`, `body.events[0]`, `params.id`, `querystring.limit`, `headers.if-match`). With several problems, the first the message names',
        examples: ['body.name'],
      }),
    ),
  },
  { description: 'Error' },
);
export type ErrorBody = Static<typeof ErrorBody>;

/** The "schema" of an answer without a body (204): it types `reply.send()` without a payload, and the OpenAPI document shows no content. */
export const NoContent = Type.Unsafe<void>({});

/** Response schemas for the error statuses an operation can answer, each the Error shape. */
export function errorResponses(...statuses: number[]): Record<number, typeof ErrorBody> {
  return Object.fromEntries(statuses.map((status) => [status, ErrorBody]));
}

export interface ErrorOptions {
  /** Headers the answer carries (Retry-After, WWW-Authenticate, Allow). */
  headers?: Readonly<Record<string, string>>;
  /** The field or parameter refused (`body.url`, `querystring.after`). */
  field?: string;
}

/**
 * The one error type that handlers and hooks throw: its code says why (and so its status, one per code:
 * error-codes.ts), its message says what, in words.
 */
export class HttpError extends Error {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly field: string | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: ErrorOptions = {},
  ) {
    super(message);
    this.name = 'HttpError';
    this.statusCode = statusOf(code);
    this.headers = options.headers ?? {};
    this.field = options.field;
  }
}

/** The 415's message, naming every media type the route takes (the OpenAPI document's example too). */
export function unsupportedMediaType(sent: string | undefined, accepted: readonly string[]): string {
  const shown = sent === undefined ? '(none)' : sent.length > 100 ? `${sent.slice(0, 100)}…` : sent;
  return `unsupported media type "${shown}": send the body as ${orList(accepted)}`;
}

/**
 * The headers of a 415 that name the media types taken, for a program to read rather than the message:
 * Accept (RFC 9110 §15.5.16), and on a PATCH Accept-Patch, the patch formats (RFC 5789 §2.2: SHOULD).
 */
export function acceptedMediaTypes(method: string, accepted: readonly string[]): Record<string, string> {
  const list = accepted.join(', ');
  return method === 'PATCH' ? { accept: list, 'accept-patch': list } : { accept: list };
}

/** The 503 of a store that cannot be reached, and the 500 of a fault: the request id says where the log has the rest. */
export function storeUnavailable(requestId: string): string {
  return `the store is unavailable, retry later (request id ${requestId})`;
}
export function storeBusy(requestId: string): string {
  return `the store is busy, retry later (request id ${requestId})`;
}
export function internalError(requestId: string): string {
  return `internal error (request id ${requestId})`;
}

/** The framework's own client errors, by its error code: the code and words of each. */
const FRAMEWORK_ERRORS: Record<
  string,
  (req: FastifyRequest) => { code: ErrorCode; message: string; field?: string; headers?: Record<string, string> }
> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (req) => {
    const accepted = bodyMediaTypes(req.method, req.routeOptions.schema?.requestBodyDoc);
    return {
      code: 'unsupported_media_type',
      message: unsupportedMediaType(req.headers['content-type'], accepted),
      headers: acceptedMediaTypes(req.method, accepted),
    };
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => ({
    code: 'invalid_header',
    message: 'the Content-Length header does not match the body',
    field: 'headers.content-length',
  }),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => ({ code: 'invalid_json', message: 'body is empty: send a JSON document' }),
  FST_ERR_CTP_INVALID_TYPE: () => ({
    code: 'invalid_header',
    message: 'the Content-Type header is not a valid media type',
    field: 'headers.content-type',
  }),
};

/** The code of a framework's client error that FRAMEWORK_ERRORS does not name, by its status. */
const FALLBACK_CODES: Partial<Record<number, ErrorCode>> = {
  408: 'request_timeout',
  413: 'body_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  431: 'headers_too_large',
};

export function bodyTooLarge(limit: number): string {
  return `body is larger than the limit of ${limit} bytes`;
}

/** The request parts, in the order Fastify validates them; it stops at the first part that fails. */
const VALIDATED_PARTS = ['params', 'body', 'querystring', 'headers'] as const;
/** The order a message lists them in: the URL's, then the headers, then the body. */
const MESSAGE_ORDER = ['params', 'querystring', 'headers', 'body'] as const;

function partData(request: FastifyRequest, part: (typeof VALIDATED_PARTS)[number]): unknown {
  if (part === 'params') return request.params;
  if (part === 'body') return request.body ?? null;
  if (part === 'querystring') return request.query;
  return request.headers;
}

interface Refusal {
  message: string;
  code: ErrorCode;
  field?: string;
}

/**
 * Every problem of a refused request, in plain words: those of the part that failed, and those of the
 * parts Fastify had not checked yet (run through the route's own validators), up to MAX_PROBLEMS. Its code
 * and field are those of the first problem the message names.
 */
function validationRefusal(error: FastifyError, request: FastifyRequest, reply: FastifyReply): Refusal {
  const failed = error.validationContext;
  const found = new Map<string, string[]>([[failed ?? 'request', validationProblems(failed ?? 'request', error.validation ?? [])]]);
  const targets = new Map<string, ProblemTarget | undefined>([[failed ?? 'request', firstProblem(failed ?? 'request', error.validation ?? [])]]);
  for (const part of VALIDATED_PARTS.slice(VALIDATED_PARTS.indexOf(failed as (typeof VALIDATED_PARTS)[number]) + 1)) {
    if (failed === undefined) break;
    const validate = request.getValidationFunction(part) as ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
    if (typeof validate !== 'function' || validate(partData(request, part))) continue;
    found.set(part, validationProblems(part, validate.errors ?? []));
    targets.set(part, firstProblem(part, validate.errors ?? []));
  }
  // A strict request's unknown body fields are problems too (http/unknown-fields.ts).
  const unknown = request.routeOptions.config.unknownFieldsProblem?.(request, reply);
  if (unknown !== undefined) {
    found.set('body', [...(found.get('body') ?? []), unknown.message]);
    if (targets.get('body') === undefined) targets.set('body', { code: 'unknown_field', field: unknown.field });
  }
  const ordered = [...MESSAGE_ORDER.flatMap((part) => found.get(part) ?? []), ...(found.get('request') ?? [])];
  const target = [...MESSAGE_ORDER, 'request'].map((part) => targets.get(part)).find((t) => t !== undefined);
  return {
    message: ordered.length > 0 ? joinProblems(ordered) : `the request is not valid`,
    code: target?.code ?? 'validation_failed',
    ...(target?.field !== undefined && { field: target.field }),
  };
}

/**
 * The error answer: the Error shape, or problem details when the client asked for them; the same facts either
 * way. Never kept by a cache (`no-store`, as every answer but a read's success), whatever Cache-Control a read
 * set before it failed (its If-Match judged after its ETag was known: http/caching.ts).
 */
export function send(reply: FastifyReply, code: ErrorCode, message: string, field?: string): FastifyReply {
  const status = statusOf(code);
  reply.header('cache-control', 'no-store');
  if (wantsProblem(reply.request)) {
    // A string: the route's response schema serializes the Error shape, not this one.
    return reply
      .code(status)
      .type(PROBLEM_JSON)
      .send(JSON.stringify(problemDetails(code, message, field)));
  }
  const body: ErrorBody = { error: status, message, code, ...(field !== undefined && { field }) };
  return reply.code(status).type('application/json').send(body);
}

/** The methods some route answers on this path (empty: no route has the path). */
export function allowedMethods(app: FastifyInstance, path: string): string[] {
  return ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((method) => app.findRoute({ method, url: path }) !== null);
}

/** The request's path, without its query. */
function pathOf(request: FastifyRequest): string {
  return request.url.split('?', 1)[0] ?? '/';
}

/** A path as a message shows it: the first 200 characters. */
function shownPath(path: string): string {
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}

/**
 * ` (did you mean /plants?)` for a path that ends in a slash where the same path without it takes the
 * method: POST /plants/ reaches /plants/{id} (an empty id), whose methods or id rule would say nothing of
 * the slash. Asked only of a refusal: a request that succeeds pays nothing.
 */
function slashHint(app: FastifyInstance, method: string, path: string): string {
  if (path.length <= 1 || !path.endsWith('/')) return '';
  const trimmed = path.replace(/\/+$/, '') || '/';
  return app.findRoute({ method, url: trimmed }) === null ? '' : ` (did you mean ${shownPath(trimmed)}?)`;
}

export function installErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((error: FastifyError | HttpError, request, reply) => {
    if (error instanceof HttpError) {
      reply.headers(error.headers);
      return send(reply, error.code, error.message, error.field);
    }
    if (error instanceof KeysUnavailableError) {
      reply.header('retry-after', String(error.retryAfterSeconds));
      return send(reply, 'keys_unavailable', error.message);
    }
    if (error instanceof StoreBusyError) {
      // Not a fault: the service is taking writes faster than the database commits them.
      request.log.warn(error.message);
      reply.header('retry-after', '1');
      return send(reply, 'store_busy', storeBusy(request.id));
    }
    if (error instanceof StoreUnavailableError) {
      // An outage the store reported as it began is logged once then (system/routes.ts), not with every refusal.
      if (!error.reported) request.log.error({ err: error.cause ?? error }, 'store unavailable');
      reply.header('retry-after', '1');
      return send(reply, 'store_unavailable', storeUnavailable(request.id));
    }
    if (error.validation) {
      const hint = error.validationContext === 'params' ? slashHint(app, request.method, pathOf(request)) : '';
      const refusal = validationRefusal(error, request, reply);
      return send(reply, refusal.code, `${refusal.message}${hint}`, refusal.field);
    }
    const status = error.statusCode ?? 500;
    // A request for no route whose body Fastify could not read (a QUERY without Content-Type, say): that there
    // is no such route is what the client needs to know.
    if (request.is404 && status >= 400 && status < 500) return notFound(request, reply);
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return send(reply, 'body_too_large', bodyTooLarge(bodyLimit));
    if (status >= 400 && status < 500) {
      const known = FRAMEWORK_ERRORS[error.code]?.(request);
      if (known !== undefined)
        return send(known.headers === undefined ? reply : reply.headers(known.headers), known.code, known.message, known.field);
      // A client error of the framework's that no entry above names (a body whose stream failed, say): the code
      // of its status, and a line in the log, so that it gets one of its own.
      request.log.warn({ err: error }, 'a client error without an error code of its own');
      return send(reply, FALLBACK_CODES[status] ?? 'invalid_request', error.message);
    }
    request.log.error({ err: error }, 'unexpected error');
    return send(reply, 'internal_error', internalError(request.id));
  });

  const notFound = (request: FastifyRequest, reply: FastifyReply) => {
    const path = pathOf(request);
    const shown = shownPath(path);
    const allowed = allowedMethods(app, path);
    const hint = slashHint(app, request.method, path);
    // A HEAD is answered as its GET would be, to the Content-Length (RFC 9110 §9.3.2): the message names GET.
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return send(reply, 'method_not_allowed', `method ${method} is not allowed on ${shown}${hint}; allowed: ${allowed.join(', ')}`);
    }
    return send(reply, 'route_not_found', `no such resource: ${method} ${shown}${hint}`);
  };
  app.setNotFoundHandler(notFound);
}
