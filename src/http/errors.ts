import { Type, type Static } from '@sinclair/typebox';
import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KeysUnavailableError } from '../auth/jwks.js';
import { StoreBusyError, StoreUnavailableError } from '../store/store.js';
import { orList } from '../words.js';
import { bodyMediaTypes } from './media-types.js';
import { joinProblems, validationProblems } from './validation-messages.js';

/** The specification's Error shape: every error answer of any status has it. */
export const ErrorBody = Type.Object(
  {
    error: Type.Integer({ format: 'int32', description: 'Numeric error value: the HTTP status' }),
    message: Type.String({ description: 'Error message text' }),
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

/** The one error type that handlers and hooks throw to answer with a given status. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** The 415's message, naming every media type the route takes (the OpenAPI document's example too). */
export function unsupportedMediaType(sent: string | undefined, accepted: readonly string[]): string {
  const shown = sent === undefined ? '(none)' : sent.length > 100 ? `${sent.slice(0, 100)}…` : sent;
  return `unsupported media type "${shown}": send the body as ${orList(accepted)}`;
}

/** The 503 of a store that cannot be reached, and the 500 of a fault: the request id says where the log has the rest. */
export function storeUnavailable(requestId: string): string {
  return `the store is unavailable, retry later (request id ${requestId})`;
}
export function internalError(requestId: string): string {
  return `internal error (request id ${requestId})`;
}

/** Messages for the framework's own client errors, chosen by their error code. */
const FRAMEWORK_MESSAGES: Record<string, (req: FastifyRequest) => string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (req) =>
    unsupportedMediaType(req.headers['content-type'], bodyMediaTypes(req.method, req.routeOptions.schema?.requestBodyDoc)),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => 'the Content-Length header does not match the body',
  FST_ERR_CTP_EMPTY_JSON_BODY: () => 'body is empty: send a JSON document',
  FST_ERR_CTP_INVALID_TYPE: () => 'the Content-Type header is not a valid media type',
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

/**
 * Every problem of a refused request, in plain words: those of the part that failed, and those of the
 * parts Fastify had not checked yet (run through the route's own validators), up to MAX_PROBLEMS.
 */
function validationMessage(error: FastifyError, request: FastifyRequest, reply: FastifyReply): string {
  const failed = error.validationContext;
  const found = new Map<string, string[]>([[failed ?? 'request', validationProblems(failed ?? 'request', error.validation ?? [])]]);
  for (const part of VALIDATED_PARTS.slice(VALIDATED_PARTS.indexOf(failed as (typeof VALIDATED_PARTS)[number]) + 1)) {
    if (failed === undefined) break;
    const validate = request.getValidationFunction(part) as ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
    if (typeof validate !== 'function' || validate(partData(request, part))) continue;
    found.set(part, validationProblems(part, validate.errors ?? []));
  }
  // A strict request's unknown body fields are problems too (http/unknown-fields.ts).
  const unknown = request.routeOptions.config.unknownFieldsProblem?.(request, reply);
  if (unknown !== undefined) found.set('body', [...(found.get('body') ?? []), unknown]);
  const ordered = [...MESSAGE_ORDER.flatMap((part) => found.get(part) ?? []), ...(found.get('request') ?? [])];
  return ordered.length > 0 ? joinProblems(ordered) : `the request is not valid`;
}

export function send(reply: FastifyReply, status: number, message: string): FastifyReply {
  const body: ErrorBody = { error: status, message };
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
      return send(reply, error.statusCode, error.message);
    }
    if (error instanceof KeysUnavailableError) {
      reply.header('retry-after', String(error.retryAfterSeconds));
      return send(reply, 503, error.message);
    }
    if (error instanceof StoreBusyError) {
      // Not a fault: the service is taking writes faster than the database commits them.
      request.log.warn(error.message);
      reply.header('retry-after', '1');
      return send(reply, 503, `the store is busy, retry later (request id ${request.id})`);
    }
    if (error instanceof StoreUnavailableError) {
      request.log.error({ err: error.cause ?? error }, 'store unavailable');
      reply.header('retry-after', '1');
      return send(reply, 503, storeUnavailable(request.id));
    }
    if (error.validation) {
      const hint = error.validationContext === 'params' ? slashHint(app, request.method, pathOf(request)) : '';
      return send(reply, 400, `${validationMessage(error, request, reply)}${hint}`);
    }
    const status = error.statusCode ?? 500;
    // A request for no route whose body Fastify could not read (a QUERY without Content-Type, say): that there
    // is no such route is what the client needs to know.
    if (request.is404 && status >= 400 && status < 500) return notFound(request, reply);
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return send(reply, 413, bodyTooLarge(bodyLimit));
    if (status >= 400 && status < 500) {
      const phrase = FRAMEWORK_MESSAGES[error.code];
      return send(reply, status, phrase ? phrase(request) : error.message);
    }
    request.log.error({ err: error }, 'unexpected error');
    return send(reply, 500, internalError(request.id));
  });

  const notFound = (request: FastifyRequest, reply: FastifyReply) => {
    const path = pathOf(request);
    const shown = shownPath(path);
    const allowed = allowedMethods(app, path);
    const hint = slashHint(app, request.method, path);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return send(reply, 405, `method ${request.method} is not allowed on ${shown}${hint}; allowed: ${allowed.join(', ')}`);
    }
    return send(reply, 404, `no such resource: ${request.method} ${shown}${hint}`);
  };
  app.setNotFoundHandler(notFound);
}
