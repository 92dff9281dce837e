import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_METHOD_ORIGINAL,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { onFrameworkAnswer } from '../http/framework-answers.js';

/**
 * A SERVER span per request, named by method and route template (`POST /plants`, `GET /plants/:id`; a
 * request no route matched: its method alone), continuing the caller's trace when it sends a valid W3C
 * `traceparent`. Its attributes are the HTTP semantic conventions' and the request id; never a header
 * but User-Agent, never the query string (it may carry anything), never a body. Installed only when
 * tracing is on: off, the request path has not one more hook.
 */

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's span while it is served (tracing on; null once ended). */
    traceSpan: Span | null;
    /** The context its handler runs in: its span, as the current one. */
    traceContext: Context | null;
  }
}

/** The request id (the answer's X-Request-Id), so that a span and the request's log lines can be matched. */
const REQUEST_ID = 'plant_store.request.id';
/** Methods as the conventions know them; any other is `_OTHER`, its spelling in http.request.method_original. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

const headerGetter = {
  get: (headers: FastifyRequest['headers'], key: string) => headers[key],
  keys: (headers: FastifyRequest['headers']) => Object.keys(headers),
};

function startAttributes(request: FastifyRequest, method: string, route: string | undefined): Attributes {
  const attributes: Attributes = {
    [ATTR_HTTP_REQUEST_METHOD]: method,
    [ATTR_URL_SCHEME]: request.protocol,
    [ATTR_URL_PATH]: request.url.split('?', 1)[0],
    [ATTR_SERVER_ADDRESS]: request.hostname,
    [ATTR_CLIENT_ADDRESS]: request.ip,
    [ATTR_NETWORK_PROTOCOL_VERSION]: request.raw.httpVersion,
    [REQUEST_ID]: request.id,
  };
  if (method !== request.method) attributes[ATTR_HTTP_REQUEST_METHOD_ORIGINAL] = request.method;
  if (route !== undefined) attributes[ATTR_HTTP_ROUTE] = route;
  if (request.port !== null) attributes[ATTR_SERVER_PORT] = request.port;
  const agent = request.headers['user-agent'];
  if (agent !== undefined) attributes[ATTR_USER_AGENT_ORIGINAL] = agent;
  return attributes;
}

/** Hooks first in line (before the request id, security headers and shedding), so the span covers all of it. */
export function installRequestSpans(app: FastifyInstance, tracer: Tracer, propagator: W3CTraceContextPropagator): void {
  app.decorateRequest('traceSpan', null);
  app.decorateRequest('traceContext', null);

  const begin = (request: FastifyRequest) => {
    const parent = propagator.extract(ROOT_CONTEXT, request.headers, headerGetter);
    const route = request.routeOptions.url;
    const method = METHODS.has(request.method) ? request.method : '_OTHER';
    const shown = method === '_OTHER' ? 'HTTP' : method;
    const span = tracer.startSpan(
      route === undefined ? shown : `${shown} ${route}`,
      { kind: SpanKind.SERVER, attributes: startAttributes(request, method, route) },
      parent,
    );
    request.traceSpan = span;
    request.traceContext = trace.setSpan(parent, span);
  };

  const end = (request: FastifyRequest, reply: FastifyReply) => {
    const span = request.traceSpan;
    if (span === null) return;
    request.traceSpan = null;
    const status = reply.statusCode;
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    // A server's span fails on a 5xx only: a 4xx is the client's error, answered as it should be.
    if (status >= 500) {
      span.setAttribute(ATTR_ERROR_TYPE, String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  };

  app.addHook('onRequest', (request, _reply, done) => {
    begin(request);
    done();
  });

  app.addHook('onResponse', (request, reply, done) => {
    end(request, reply);
    done();
  });

  // A URL the router cannot read is answered outside the hooks (http/framework-answers.ts): its span too.
  onFrameworkAnswer(app, (request, reply) => {
    begin(request);
    end(request, reply);
  });

  // A client that goes away before its answer: the span ends then, with no status code.
  app.addHook('onRequestAbort', (request, done) => {
    const span = request.traceSpan;
    if (span !== null) {
      request.traceSpan = null;
      span.addEvent('the client closed the connection before the answer');
      span.end();
    }
    done();
  });

  // Every handler runs in its request's context, so that the store's batches know whom they serve (a
  // body's stream events run in the connection's context, so a hook's context would not reach the handler).
  app.addHook('onRoute', (route) => {
    const handler = route.handler as RouteHandlerMethod;
    route.handler = function traced(this: FastifyInstance, request, reply) {
      const ctx = request.traceContext;
      return ctx === null ? handler.call(this, request, reply) : context.with(ctx, handler, this, request, reply);
    };
  });
}
