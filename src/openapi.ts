import type { TSchema } from '@sinclair/typebox';
import type { RouteOptions } from 'fastify';
import { ErrorBody, NoContent } from './http/errors.js';
import type { WebhookEventDoc } from './webhooks/events-doc.js';

declare module 'fastify' {
  interface FastifySchema {
    operationId?: string;
    /** The group /docs shows the operation in: one of TAGS. */
    tags?: Array<keyof typeof TAGS>;
    summary?: string;
    /** The OpenAPI description of each status the route answers with a body of its own or none. */
    responseDescriptions?: Record<number, string>;
    /** Headers a status carries on this route (besides those it carries everywhere). */
    responseHeaders?: Record<number, Record<string, { description: string; schema: object }>>;
    /** Media types a status may also be answered in (exports), besides application/json. */
    responseMediaTypes?: Record<number, Record<string, { schema: object }>>;
    /** The request body of a route that reads it as a stream (no body schema to validate it whole). */
    requestBodyDoc?: Record<string, { schema: unknown }>;
  }
}

/** The groups of operations, as /docs shows them; every operation names one. */
export const TAGS = {
  plants: 'The plants: create, read, replace, change and delete them, list and export them, import many at once',
  webhooks: 'Webhook endpoints: where the service announces plant changes, signed, retried and logged',
  events: 'The change feed: every plant change in commit order, read as pages or followed live (Server-Sent Events), resumable',
  system: 'Health, readiness and this document: public, no token needed',
} as const;

/** What each error status means, for every operation that can answer it. */
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Error response: the request is not valid (the message names the field or parameter)',
  401: 'Error response: missing, malformed, unknown or revoked bearer token, or an invalid JWT',
  403: 'Error response: the token lacks the scope this operation needs',
  404: 'Error response: nothing with this id',
  409: 'Error response: a conflict with what is stored; nothing changed',
  412: 'Error response: a precondition failed (If-Match names no current version, or If-None-Match: * and the plant exists); nothing changed',
  413: 'Error response: the body is larger than the limit',
  415: 'Error response: the body is not of a media type this operation takes',
  503: 'Error response: the store is unavailable; retry after Retry-After seconds',
};

/** Headers that go with a status wherever it is answered. */
const STATUS_HEADERS: Record<number, Record<string, { description: string; schema: { type: 'string' } }>> = {
  401: {
    'WWW-Authenticate': { description: 'Bearer realm="plant-store", with error="invalid_token" when a token was sent', schema: { type: 'string' } },
  },
  403: { 'WWW-Authenticate': { description: 'Bearer realm="plant-store", error="insufficient_scope"', schema: { type: 'string' } } },
  503: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'string' } } },
};

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
    description: 'v1,<base64 HMAC-SHA256>: one signature, or two (new first) during the 24 hours after a secret rotation',
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

const MEDIA_TYPES: Record<string, string[]> = {
  PATCH: ['application/merge-patch+json', 'application/json'],
};

/**
 * The OpenAPI 3.1 document of the API, generated from the routes as registered: the same schemas
 * validate requests, serialize answers and appear here, so the document cannot drift from behaviour.
 */
export function buildOpenApi(
  routes: readonly RouteOptions[],
  extras: { schemas: ReadonlyArray<readonly [string, TSchema]>; webhooks: Record<string, WebhookEventDoc>; signing: string },
): object {
  const components = new Map<unknown, string>([...extras.schemas.map(([name, s]) => [s, name] as const), [ErrorBody, 'Error']]);
  // JSON Schema as the document shows it: named schemas by reference, TypeBox's symbols dropped.
  const show = (schema: unknown, top = false): unknown => {
    if (!top && components.has(schema)) return { $ref: `#/components/schemas/${components.get(schema)}` };
    if (Array.isArray(schema)) return schema.map((s) => show(s));
    if (schema === null || typeof schema !== 'object') return schema;
    return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, show(v)]));
  };
  const parameters = (schema: unknown, where: 'path' | 'query' | 'header') => {
    const object = schema as { properties?: Record<string, TSchema>; required?: string[] } | undefined;
    return Object.entries(object?.properties ?? {}).map(([name, s]) => {
      const { description, ...rest } = show(s) as { description?: string };
      return { name, in: where, required: where === 'path' || (object?.required ?? []).includes(name), description, schema: rest };
    });
  };

  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const method = String(route.method);
    if (method === 'HEAD' || !route.schema) continue;
    const schema = route.schema;
    const path = route.url.replace(/:(\w+)/g, '{$1}');
    const responses: Record<string, unknown> = {};
    const statuses = new Set([...Object.keys(schema.responseDescriptions ?? {}), ...Object.keys(schema.response ?? {})]);
    for (const status of [...statuses].sort()) {
      const body = (schema.response as Record<string, unknown> | undefined)?.[status];
      const headers = { ...STATUS_HEADERS[Number(status)], ...schema.responseHeaders?.[Number(status)] };
      responses[status] = {
        description: schema.responseDescriptions?.[Number(status)] ?? ERROR_DESCRIPTIONS[Number(status)] ?? 'Error response',
        ...(Object.keys(headers).length > 0 && { headers }),
        ...(body && body !== NoContent
          ? { content: { 'application/json': { schema: show(body) }, ...schema.responseMediaTypes?.[Number(status)] } }
          : {}),
      };
    }
    // Any status not listed (404/405 for another route, 429, 500 with its request id…) has the Error shape too.
    responses.default = {
      description: 'Error response: any other error, e.g. 500 with the request id in the message',
      content: { 'application/json': { schema: show(ErrorBody) } },
    };
    const auth = route.config?.auth;
    if (schema.tags === undefined || schema.tags.length === 0) throw new Error(`route ${method} ${route.url} has no OpenAPI tag`);
    paths[path] ??= {};
    paths[path][method.toLowerCase()] = {
      operationId: schema.operationId,
      tags: schema.tags,
      summary: schema.summary,
      security: auth === 'public' ? [] : [{ bearerAuth: [auth] }],
      ...(auth !== 'public' && { description: `Needs a bearer token with the scope \`${auth}\`.` }),
      parameters: [...parameters(schema.params, 'path'), ...parameters(schema.querystring, 'query'), ...parameters(schema.headers, 'header')],
      ...(schema.requestBodyDoc !== undefined && {
        requestBody: {
          required: true,
          content: Object.fromEntries(Object.entries(schema.requestBodyDoc).map(([type, { schema: s }]) => [type, { schema: show(s) }])),
        },
      }),
      ...(schema.body !== undefined && {
        requestBody: {
          required: true,
          content: Object.fromEntries((MEDIA_TYPES[method] ?? ['application/json']).map((type) => [type, { schema: show(schema.body) }])),
        },
      }),
      responses,
    };
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Plant Store',
      version: '1.0.0',
      description: 'A sample API that uses a plant store as an example to demonstrate features in the OpenAPI 3.1 specification',
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
