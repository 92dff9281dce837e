import type { TSchema } from '@sinclair/typebox';
import type { RouteOptions } from 'fastify';
import type { ErrorExample } from '../http/error-codes.js';
import { ErrorBody, NoContent } from '../http/errors.js';
import { ProblemDetails } from '../http/problem-details.js';
import { bodyMediaTypes } from '../http/media-types.js';
import { MESSAGE_ANNOTATIONS } from '../http/validation.js';
import { defaultErrorResponse, errorResponse, exampleStatuses, operationExamples, parserResponses } from './errors.js';
import { API_DESCRIPTION } from './intro.js';
import { operationHeaders, withOperationHeaders, type HeaderDoc } from './headers.js';
import { withInt64String, withoutInt64String, withPreferInt64 } from './int64.js';
import type { WebhookEventDoc } from '../webhooks/events-doc.js';

/**
 * The interface's version, which the specification fixes at 1.0.0: the API's, not the service's release
 * (GET /healthz names that one, package.json's). It changes only with a change to the API that breaks its
 * clients (docs/upgrading.md: semantic versioning).
 */
const API_VERSION = '1.0.0';

declare module 'fastify' {
  interface FastifySchema {
    operationId?: string;
    /** The group /docs shows the operation in: one of TAGS. */
    tags?: Array<keyof typeof TAGS>;
    summary?: string;
    /** More than the summary says, after the sentence on the scope it needs. */
    description?: string;
    /** The OpenAPI description of each status the route answers with a body of its own or none. */
    responseDescriptions?: Record<number, string>;
    /** Headers a status carries on this route (besides those it carries everywhere). */
    responseHeaders?: Record<number, Record<string, { description: string; schema: object }>>;
    /** Media types a status may also be answered in (exports), besides application/json. */
    responseMediaTypes?: Record<number, Record<string, { schema: object }>>;
    /** The request body of a route that reads it as a stream (no body schema to validate it whole), with an example of each media type. */
    requestBodyDoc?: Record<string, { schema: unknown; example: unknown }>;
    /** An example of the route's JSON body, as the document shows it (every request body has one: the document is refused without). */
    bodyExample?: unknown;
    /**
     * Examples of the errors only this route knows (its 404, 409, 412; a 400 of its body), as the service
     * really writes them, each with its code; openapi/errors.ts makes those every route of a kind shares.
     * The document lists, for each status, the codes of its examples: a code the route may answer needs one.
     */
    errorExamples?: readonly ErrorExample[];
  }
}

/** The groups of operations, as /docs shows them; every operation names one. */
export const TAGS = {
  plants: 'The plants: create, read, replace, change and delete them, list and export them, import many at once',
  webhooks: 'Webhook endpoints: where the service announces plant changes, signed, retried and logged',
  events: 'The change feed: every plant change in commit order, read as pages or followed live (Server-Sent Events), resumable',
  tokens: 'Bearer tokens: what the token of a request may do; the stored tokens, listed, made and revoked (`tokens:manage`)',
  system: 'Health, readiness and this document: public, no token needed',
} as const;

/** The headers every webhook delivery carries. */
const WEBHOOK_HEADERS = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The event: the same for every endpoint that receives it and on every retry or replay',
    schema: { type: 'string' },
  },
  { name: 'webhook-timestamp', in: 'header', required: true, description: 'Unix seconds of this attempt', schema: { type: 'string' } },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description: '`v1,<base64 HMAC-SHA256>`: one signature, or two (new first) during the 24 hours after a secret rotation',
    schema: { type: 'string' },
  },
];

/** What a receiver's answer means to the service. */
const WEBHOOK_ANSWERS = {
  '2XX': { description: 'Received: any 2xx within WEBHOOK_TIMEOUT_MS acknowledges the delivery' },
  '410': { description: 'Gone: the endpoint is disabled at once' },
  '429': { description: 'Too many: retried, no sooner than its Retry-After' },
  '503': { description: 'Unavailable: retried, no sooner than its Retry-After' },
  default: { description: 'Anything else (a redirect included), or no answer in time: retried by WEBHOOK_RETRY_SCHEDULE' },
};

/**
 * The OpenAPI 3.1 document of the API, generated from the routes as registered: the same schemas
 * validate requests, serialize answers and appear here, so the document cannot drift from behaviour.
 */
export function buildOpenApi(
  routes: readonly RouteOptions[],
  extras: { schemas: ReadonlyArray<readonly [string, TSchema]>; webhooks: Record<string, WebhookEventDoc>; signing: string; bodyLimit: number },
): object {
  const components = new Map<unknown, string>([
    ...extras.schemas.map(([name, s]) => [s, name] as const),
    [ErrorBody, 'Error'],
    [ProblemDetails, 'ProblemDetails'],
  ]);
  // JSON Schema as the document shows it: named schemas by reference, TypeBox's symbols dropped.
  const show = (schema: unknown, top = false): unknown => {
    if (!top && components.has(schema)) return { $ref: `#/components/schemas/${components.get(schema)}` };
    if (Array.isArray(schema)) return schema.map((s) => show(s));
    if (schema === null || typeof schema !== 'object') return schema;
    // Words for the validator's messages (patternMeaning) are not the document's.
    return withInt64String(Object.fromEntries(Object.entries(schema).flatMap(([k, v]) => (MESSAGE_ANNOTATIONS.includes(k) ? [] : [[k, show(v)]]))));
  };
  const parameters = (schema: unknown, where: 'path' | 'query' | 'header') => {
    const object = schema as { properties?: Record<string, TSchema>; required?: string[] } | undefined;
    return Object.entries(object?.properties ?? {}).map(([name, s]) => {
      const { description, ...rest } = withoutInt64String(show(s) as Record<string, unknown>) as { description?: string; type?: string };
      // A list in a query string is the parameter repeated (?tag=a&tag=b): OpenAPI's default, said outright.
      const repeated = where === 'query' && rest.type === 'array' ? { style: 'form', explode: true } : {};
      const deprecated = (rest as { deprecated?: boolean }).deprecated === true ? { deprecated: true } : {};
      return {
        name,
        in: where,
        required: where === 'path' || (object?.required ?? []).includes(name),
        description,
        ...deprecated,
        ...repeated,
        schema: rest,
      };
    });
  };

  const paths: Record<string, Record<string, unknown>> = {};
  // The headers many answers share (openapi/headers.ts), each once, referred to where sent.
  const headerComponents = new Map<string, HeaderDoc>();
  const register = (component: string, header: HeaderDoc) => void headerComponents.set(component, header);
  const parser = parserResponses({ error: show(ErrorBody), problem: show(ProblemDetails) });
  for (const route of routes) {
    const method = String(route.method);
    if (method === 'HEAD' || !route.schema) continue;
    const schema = route.schema;
    const path = route.url.replace(/:(\w+)/g, '{$1}');
    const auth = route.config?.auth ?? 'public';
    const takesBody = schema.body !== undefined || schema.requestBodyDoc !== undefined;
    const bodySchema = schema.body as { type?: string; additionalProperties?: unknown } | undefined;
    const keyed = (schema.headers as { properties?: Record<string, unknown> } | undefined)?.properties?.['idempotency-key'] !== undefined;
    const examples = operationExamples({
      operation: `${method} ${route.url}`,
      method,
      auth,
      accepted: takesBody ? bodyMediaTypes(method, schema.requestBodyDoc) : undefined,
      params: schema.params,
      query: schema.querystring,
      headers: schema.headers,
      jsonBody: bodySchema !== undefined,
      namedFields: bodySchema?.type === 'object' && bodySchema.additionalProperties !== false,
      keyed,
      probe: route.config?.probe === true,
      servesWhenOverloaded: route.config?.servesWhenOverloaded === true,
      bodyLimit: extras.bodyLimit,
      examples: schema.errorExamples,
    });
    // Every operation may answer 400 (an unknown query parameter, at least), 500 (a fault) and the parser's
    // 408, 414 and 431; all but the probes 429 (rate limits); all but the one that serves while overloaded
    // 503: each status of an error it may answer.
    const statuses = new Set([
      ...Object.keys(schema.responseDescriptions ?? {}),
      ...Object.keys(schema.response ?? {}),
      ...exampleStatuses(examples).map(String),
      ...Object.values(parser).map(({ status }) => String(status)),
    ]);
    const responses: Record<string, unknown> = {};
    const errorSchemas = { error: show(ErrorBody), problem: show(ProblemDetails) };
    const shared = operationHeaders({
      counted: route.config?.probe !== true,
      keyed,
      handlesFields: takesBody,
      int64: route.config?.int64?.answer !== undefined,
      renamed: route.config?.renamedQuery !== undefined,
    });
    // A read decides on its preconditions once its answer is made (its ETag the answer's): its 304 and its 412
    // go with the headers of the answer they stand for, its 200's (the ETag, the next page's Link, a total).
    const revalidation = method === 'GET' ? { ...schema.responseHeaders?.[200], ...schema.responseHeaders?.[304] } : undefined;
    for (const status of [...statuses].sort()) {
      const code = Number(status);
      const description = schema.responseDescriptions?.[code];
      const refused = Object.entries(parser).find(([, known]) => known.status === code);
      if (refused !== undefined) {
        responses[status] = { $ref: `#/components/responses/${refused[0]}` };
        continue;
      }
      if (code >= 400) {
        try {
          const own = code === 412 && method === 'GET' ? revalidation : schema.responseHeaders?.[code];
          responses[status] = errorResponse(code, description, examples, errorSchemas, method, { own, shared, register });
        } catch (error) {
          throw new Error(`${method} ${route.url}: ${(error as Error).message}`);
        }
        continue;
      }
      const body = (schema.response as Record<string, unknown> | undefined)?.[status];
      const headers = withOperationHeaders(code === 304 ? revalidation : schema.responseHeaders?.[code], shared, register);
      responses[status] = {
        description: description ?? 'Response',
        ...(headers && { headers }),
        ...(body && body !== NoContent
          ? { content: { 'application/json': { schema: show(body) }, ...schema.responseMediaTypes?.[code] } }
          : schema.responseMediaTypes?.[code] && { content: schema.responseMediaTypes[code] }),
      };
    }
    responses.default = defaultErrorResponse(errorSchemas, shared, register);
    if (schema.tags === undefined || schema.tags.length === 0) throw new Error(`route ${method} ${route.url} has no OpenAPI tag`);
    if (schema.body !== undefined && schema.bodyExample === undefined)
      throw new Error(`route ${method} ${route.url} has no example of its body (bodyExample)`);
    paths[path] ??= {};
    paths[path][method.toLowerCase()] = {
      operationId: schema.operationId,
      tags: schema.tags,
      summary: schema.summary,
      security: auth === 'public' ? [] : [{ bearerAuth: auth === 'token' ? [] : [auth] }],
      ...((auth !== 'public' || schema.description !== undefined) && {
        description: [
          auth === 'public'
            ? undefined
            : auth === 'token'
              ? 'Needs a bearer token, with any scopes.'
              : `Needs a bearer token with the scope \`${auth}\`.`,
          schema.description,
        ]
          .filter((part) => part !== undefined)
          .join(' '),
      }),
      parameters: ((all) => (route.config?.int64?.answer === undefined ? all : withPreferInt64(all)))([
        ...parameters(schema.params, 'path'),
        ...parameters(schema.querystring, 'query'),
        ...parameters(schema.headers, 'header'),
      ]),
      ...(schema.requestBodyDoc !== undefined && {
        requestBody: {
          required: true,
          content: Object.fromEntries(
            Object.entries(schema.requestBodyDoc).map(([type, { schema: s, example }]) => [type, { schema: show(s), example }]),
          ),
        },
      }),
      ...(schema.body !== undefined && {
        requestBody: {
          required: true,
          content: Object.fromEntries(
            bodyMediaTypes(method, undefined).map((type) => [type, { schema: show(schema.body), example: schema.bodyExample }]),
          ),
        },
      }),
      responses,
    };
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Plant Store',
      version: API_VERSION,
      description: API_DESCRIPTION,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    webhooks: Object.fromEntries(
      Object.entries(extras.webhooks).map(([event, doc]) => [
        event,
        {
          post: {
            operationId: event,
            summary: doc.summary,
            description: extras.signing,
            parameters: WEBHOOK_HEADERS,
            requestBody: { required: true, content: { 'application/json': { schema: show(doc.body) } } },
            responses: WEBHOOK_ANSWERS,
          },
        },
      ]),
    ),
    components: {
      schemas: Object.fromEntries([...components].map(([schema, name]) => [name, show(schema, true)])),
      headers: Object.fromEntries([...headerComponents].sort(([a], [b]) => a.localeCompare(b))),
      responses: Object.fromEntries(Object.entries(parser).map(([name, { response }]) => [name, response])),
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: "The service's own tokens, or JWTs of the identity provider when one is configured",
        },
      },
    },
    security: [{ bearerAuth: [] }],
  };
}
