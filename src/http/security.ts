import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { allowedMethods } from './errors.js';
import { expectationProblem, hostProblem, targetProblem, transferProblem } from './request-target.js';

/**
 * Headers every answer carries, errors included. The API serves only JSON, so the policy forbids
 * everything a browser could do with an answer: load resources from it, frame it, sniff it as HTML,
 * cache it (plant data is per-token and changes), or send a Referer onward.
 * No Strict-Transport-Security: the service speaks plain HTTP; TLS and HSTS belong to the proxy in front.
 * The pages for browsers (/docs and /console) are the exception: they set PAGE_CSP, and their files may be
 * cached.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

/**
 * The policy of the pages for browsers, /docs (Swagger UI) and /console: everything comes from the service
 * itself, and nothing inline, no eval, no fonts, no frames, no other origin.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  // The pages' scripts are files the service serves; none is inline.
  "script-src 'self'",
  // Stylesheets likewise. Swagger UI's other styling is set through the DOM (element.style), which the policy allows.
  "style-src 'self'",
  // Icons: the console's is an empty data: URL (sparing a request for /favicon.ico), swagger-ui.css's are data: URLs.
  "img-src 'self' data:",
  // The API's requests: /openapi.json, "Try it out", the console's calls and its change feed.
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The headers a browser script may send (CORS preflight) and read (Access-Control-Expose-Headers): every
 * one the API takes or answers beyond the CORS-safelisted ones, so a browser client can make conditional
 * requests (ETag, If-Match, If-None-Match), ask for counts (Prefer, X-Total-Count), resume the change
 * feed (Last-Event-ID), retry a POST safely (Idempotency-Key, Idempotent-Replayed) and learn which tokens
 * GET /tokens cannot list (Unlisted-Token-Sources), learn of a deprecated name (Deprecation, Sunset), as any other.
 */
// traceparent and tracestate: the service reads them (tracing), and a browser app instrumented with
// OpenTelemetry sends them on every request, which a preflight refusing them blocked whole.
const CORS_REQUEST_HEADERS = 'authorization, content-type, idempotency-key, if-match, if-none-match, last-event-id, prefer, traceparent, tracestate';
const CORS_EXPOSED_HEADERS = [
  // A 415's: the media types an operation takes, and a PATCH's patch formats.
  'accept',
  'accept-patch',
  'content-disposition',
  'etag',
  'idempotent-replayed',
  'link',
  'location',
  'preference-applied',
  'x-total-count',
  'missing-ids',
  'unlisted-token-sources',
  'vary',
  'warning',
  'retry-after',
  'www-authenticate',
  'x-request-id',
  'deprecation',
  'sunset',
  'ratelimit',
  'ratelimit-policy',
  // draft 06's fields, kept until their sunset (docs/api.md, "Deprecations")
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
].join(', ');
const CORS_MAX_AGE_SECONDS = '600';

/**
 * Cross-origin access for browsers: off unless origins are configured. Bearer tokens are not cookies,
 * so credentials mode is never allowed. A preflight (OPTIONS with Access-Control-Request-Method) from an
 * allowed origin to a path that has a route is answered 204 here, before authentication, because a
 * browser sends it without the token; anything else falls through to the usual 404/405.
 * A shared cache must never serve an answer made for one Origin to another (Fetch, "CORS protocol and HTTP
 * caches"): with a list, every answer says `Vary: Origin`, those without CORS headers too (no Origin sent,
 * or one not allowed); with `*`, every answer carries the same CORS headers, Origin sent or not, and so
 * needs no Vary.
 */
export type CorsAnswer = (request: FastifyRequest, reply: FastifyReply) => boolean;

/**
 * The CORS headers of an answer, and the answer to a preflight (true: answered). Shared by the hook below
 * and by the router's own refusals (a path that does not decode, an id past the router's longest:
 * transport.ts), which no hook sees: a browser's page reads those too, and their preflight is answered.
 */
export function corsAnswer(origins: readonly string[]): CorsAnswer {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return function cors(request, reply) {
    const origin = request.headers.origin;
    if (any) reply.header('access-control-allow-origin', '*');
    else {
      reply.header('vary', 'Origin');
      if (origin === undefined || !allowed.has(origin.toLowerCase())) return false;
      reply.header('access-control-allow-origin', origin);
    }
    const preflightMethod = request.headers['access-control-request-method'];
    if (request.method !== 'OPTIONS' || preflightMethod === undefined || origin === undefined) {
      reply.header('access-control-expose-headers', CORS_EXPOSED_HEADERS);
      return false;
    }
    const methods = allowedMethods(request.server, request.url.split('?', 1)[0] ?? '/');
    if (methods.length === 0) return false;
    reply
      .code(204)
      .headers({
        'access-control-allow-methods': methods.join(', '),
        'access-control-allow-headers': CORS_REQUEST_HEADERS,
        'access-control-max-age': CORS_MAX_AGE_SECONDS,
      })
      .send();
    return true;
  };
}

/** A check run on every request after the headers are set: an error refuses the request. */
export type RequestCheck = (request: FastifyRequest) => Error | undefined;

/** What makes a request no request this service takes: its Host, its target, its Expect, its transfer coding. */
function requestProblem(request: FastifyRequest): Error | undefined {
  const { headers, raw } = request;
  return (
    hostProblem(headers.host, raw.httpVersionMinor, raw.rawHeaders) ??
    targetProblem(request.url, request.method) ??
    expectationProblem(headers.expect) ??
    transferProblem(headers['transfer-encoding'])
  );
}

/**
 * The work every request gets first, in one onRequest hook (each hook costs a pass through Fastify's
 * hook runner, on the hottest path): the answer's x-request-id and security headers, the request's own
 * problems (requestProblem), then `check` (load shedding, which must come before authentication). With
 * CORS configured its hook goes between the headers and the rest, so that a refusal a browser's page
 * gets (a query that does not decode, say) carries the CORS headers the page needs to read it.
 */
export function installSecurity(app: FastifyInstance, settings: { corsOrigins: readonly string[] }, check: RequestCheck): void {
  const withCors = settings.corsOrigins.length > 0;
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id).headers(SECURITY_HEADERS);
    if (withCors) return done();
    done(requestProblem(request) ?? check(request));
  });
  if (withCors) {
    const cors = corsAnswer(settings.corsOrigins);
    // A preflight answered here goes no further (its done is never called).
    app.addHook('onRequest', (request, reply, done) => void (cors(request, reply) || done()));
    app.addHook('onRequest', (request, _reply, done) => done(requestProblem(request) ?? check(request)));
  }
}
