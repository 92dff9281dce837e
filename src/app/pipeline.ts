import { LogController, type FastifyInstance, type FastifyServerOptions, type RouteOptions } from 'fastify';
import type { Logger } from 'pino';
import { JwtVerifier } from '../auth/jwt.js';
import { TokenVerifier } from '../auth/tokens.js';
import type { Config } from '../config/config.js';
import { authHook, requireRouteAuth } from '../http/auth.js';
import { installRenamedQueries } from '../http/deprecation.js';
import { installErrorHandling } from '../http/errors.js';
import { headAnswersLikeGet } from '../http/head.js';
import { installInt64Preference, int64Answer } from '../http/int64-preference.js';
import { installJsonParser } from '../http/json.js';
import { OverloadMonitor } from '../http/overload.js';
import { closesConnection } from '../http/connection-turns.js';
import { acknowledgeHandling } from '../http/preferences.js';
import { limitedAuthentication, MemoryRateLimiter, SharedRateLimiter } from '../http/rate-limit.js';
import { closeAfterRefusedBody } from '../http/refused-body.js';
import { installSecurity } from '../http/security.js';
import { continueWhenBodyWanted } from '../http/expect-continue.js';
import { requireStrictQueries } from '../http/strict-query.js';
import { onFrameworkAnswer } from '../http/framework-answers.js';
import { configureServer, MAX_PARAM_LENGTH, transportOptions } from '../http/transport.js';
import { installUnknownFields } from '../http/unknown-fields.js';
import { validatorCompiler } from '../http/validation.js';
import { lazySerializers } from '../http/serialization.js';
import { accessLogHook, lazyRequestLogger } from '../logging/logger.js';
import { installRequestMetrics } from '../metrics/hooks.js';
import type { Metrics } from '../metrics/registry.js';
import type { RateCounter, Store } from '../store/store.js';
import type { Tracing } from '../tracing/sdk.js';
import type { Service } from './services.js';

/**
 * What a request passes through, in order: this page registers every step, and nothing registers one
 * elsewhere (a route module adds its handler and schemas, nothing else), so the order is read here. Each
 * step says what it costs and why it is there; the costs are the stage tables' µs per request of a POST
 * at 64 connections (bench/RESULTS.md, "Where a request's time goes", from `npm run bench -- --cpu-prof`,
 * bench/stages.ts), out of about 77 µs of the main thread under the profiler. The performance work reads
 * this page first. Fastify runs hooks of one kind in the order they are added, and the kinds in its
 * lifecycle's order: onRequest, parsing, validation, preHandler, the handler, serialisation, onSend,
 * onResponse; so the order of the calls below is the order a request meets them.
 */

/** What the rest of the app and the process take from the pipeline. */
export interface Pipeline {
  /** The request deadlines (the import's longer one is set by its route). */
  deadlines: ReturnType<typeof configureServer>;
  /** Its long-lived parts, started when the app is ready and stopped when it closes (app/services.ts). */
  services: Service[];
  /** Every route as registered, for the OpenAPI document. */
  routes: RouteOptions[];
  /** Told when the process begins to stop: answers from then on say `Connection: close`. */
  stopping: () => void;
  /** The rate limits' counts when this process keeps them (RATE_LIMIT_PER_MINUTE on SQLite, one worker): a reload hands them on. */
  rateLimits: MemoryRateLimiter | undefined;
  /** Told when this app revokes a stored token: refused from its next request on (auth/tokens.ts caches look-ups). */
  revoked: (tokenId: string) => void;
}

let instance = 0;

/** Request ids unique across restarts and instances: a random prefix per app, then a counter. */
function requestIds(): () => string {
  const prefix = `${process.pid.toString(36)}${(instance++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  let counter = 0;
  return () => `${prefix}-${(++counter).toString(36)}`;
}

/**
 * 0. The transport, before any hook: Node's HTTP parser, the connection cap, idle keep-alive, the headers'
 *    deadline (server options), a request id per request and one access line instead of Fastify's two.
 *    Accepting and parsing: 6.5 µs; writing the answer: 18 µs (both mostly Node's own, as the bare server
 *    pays them too).
 */
export function serverOptions(settings: Config, logger: Logger | undefined): FastifyServerOptions {
  // One sequence for the requests Fastify reads and those Node's parser refuses (http/transport.ts).
  const requestId = requestIds();
  return {
    ...transportOptions(settings, requestId),
    ...(logger ? { loggerInstance: logger, childLoggerFactory: lazyRequestLogger } : { logger: false }),
    bodyLimit: settings.bodyLimit,
    genReqId: requestId,
    requestIdHeader: false,
    logController: new LogController({ disableRequestLogging: true }),
    // Fastify's own 503 to a request that arrives on an open connection while the app closes has its own
    // shape ({"statusCode":503,"error":"Service Unavailable",…}), not the API's Error: such a request is
    // served instead (its answer says Connection: close, as step 11's do from the stop on).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Answers' serializers compiled on first use, shared by the process's apps (http/serialization.ts).
    schemaController: { compilersFactory: { buildSerializer: lazySerializers } },
  };
}

export interface PipelineParts {
  settings: Config;
  store: Store;
  logger?: Logger | undefined;
  metrics?: Metrics | undefined;
  tracing?: Tracing | undefined;
  /** Where the rate limits count when the store counts none (the supervisor of several workers on SQLite). */
  rateCounter?: RateCounter | undefined;
}

export function installPipeline(app: FastifyInstance, { settings, store, logger, metrics, tracing, rateCounter }: PipelineParts): Pipeline {
  // 1. Tracing (OTEL_EXPORTER_OTLP_ENDPOINT only; nothing when off): first, so that a request's span covers
  //    every step after it, and before the routes, whose handlers it wraps in the request's context.
  if (tracing) tracing.installRequestSpans(app);

  // 2. Transport deadlines: the whole request within REQUEST_TIMEOUT_MS (408), tracked per request on one
  //    timer wheel, not a timer each; half-open connections still answered. With 3 and 4: 1.1 µs.
  const deadlines = configureServer(app, settings);

  // 3. The request id and security headers, the Host check, then load shedding (503 while the event loop
  //    lags or the heap is full): one onRequest hook, since each hook is a pass through Fastify's runner.
  //    First because refusing must cost less than serving. CORS (CORS_ORIGINS only) comes between the
  //    Host check and the shedding, in a hook of its own: nothing when off.
  const overload = new OverloadMonitor(settings, (reason) =>
    reason === undefined
      ? app.log.warn('load back to normal: no longer shedding')
      : app.log.warn({ reason }, `overloaded: answering 503 until it passes (${reason})`),
  );
  installSecurity(app, settings, (request) => overload.refusal(request));

  // 4. Authentication (1.4 µs: a cached token is one Map look-up) and the rate limit around it, counting
  //    every answered request once against its token or its address (RATE_LIMIT_PER_MINUTE; nothing when
  //    off): before the body is read, so that no unauthenticated caller costs a parse or learns of validation.
  //    JWTs are verified only when a JWT key is configured; a JWKS is fetched once the app is ready.
  //    The counts are the database's on PostgreSQL, the supervisor's with several workers on SQLite (one
  //    message per turn of the event loop), else this process's.
  const limit = settings.rateLimitPerMinute;
  const sharedCounter = store.rateCounter ?? rateCounter;
  const counted = limit > 0 && !sharedCounter ? new MemoryRateLimiter(limit) : undefined;
  const limiter = limit > 0 ? (sharedCounter ? new SharedRateLimiter(limit, sharedCounter) : counted) : undefined;
  const jwt = JwtVerifier.fromConfig(settings, (reason) =>
    app.log.warn({ reason }, 'cannot fetch the JWT keys from JWT_JWKS_URL (known keys, if any, keep serving)'),
  );
  const verifier = new TokenVerifier(settings.tokens, store.tokens, jwt);
  const authenticate = authHook(verifier);
  app.addHook('onRequest', limiter ? limitedAuthentication(limiter, authenticate) : authenticate);

  // 5. The rules every route must follow, checked as it registers (nothing per request): it says who may
  //    call it (config.auth), it refuses a query parameter it does not take (a renamed one's old name is
  //    taken, said deprecated: a hook on those few routes only), a body field it does not know is said or
  //    refused (step 8). (An Idempotency-Key sent twice is refused where the key is read.) Its int64
  //    members are read from its schemas, for Prefer: int64=string (steps 6 and 11). A HEAD route's 304
  //    drops the Content-Length Fastify gives it (a hook on the HEAD routes only).
  const routes: RouteOptions[] = [];
  requireRouteAuth(app, (route) => routes.push(route));
  requireStrictQueries(app);
  installRenamedQueries(app);
  installInt64Preference(app);
  installUnknownFields(app, settings.unknownFields === 'refuse' ? 'strict' : 'lenient');
  headAnswersLikeGet(app);

  // 6. The body parser: JSON with exact int64 (a text with no run of 16 digits takes JSON.parse), UTF-8
  //    and surrogates checked, depth bounded; any other media type 415. 4.3 µs of a POST.
  installJsonParser(app);
  //    Expect: 100-continue is answered here, as the body is about to be read (a preParsing hook of the
  //    routes that take one; one header read), not by Node as the head arrives: a request refused by the
  //    steps before, or on its head (413, 415), is never asked for its body.
  continueWhenBodyWanted(app);

  // 7. Validation: each schema compiled once by Ajv, shared by every app; every problem listed when one is
  //    found (a second, error-collecting pass only then). 0.8 µs.
  app.setValidatorCompiler(validatorCompiler);

  // 8. Unknown body fields (preHandler of the routes with an object body, installed by step 5): a Warning
  //    each, or a 400 with Prefer: handling=strict. A loop over the body's few keys.

  // 9. The handler and the store hand-off: in the route modules. A write waits for its group commit (the
  //    writer thread on SQLite, the batch's transaction on PostgreSQL): 20 µs on the main thread, most of it
  //    the hand-off to the writer thread and the wake-ups, not the clone.

  // 10. Serialisation by each route's response schema (fast-json-stringify); pages of plants come as the
  //     store's JSON text, sent as they are. Under 0.3 µs.

  // 11. onSend: a request refused before its body was read has its connection closed after the answer, the
  //     rest of the body drained first; from the moment the process begins to stop (its drain included),
  //     every answer says Connection: close, so that each keep-alive connection ends after an answer, never
  //     under a request the client is sending. One hook for both (each hook is a pass through Fastify's
  //     runner): one flag read for most answers.
  //     An error answer to a write that asked for a handling says it applied it, as every other answer does.
  //     A route whose answers hold int64 values says `Vary: Prefer`, and writes them as strings for a client
  //     that sent `Prefer: int64=string`: one config read for the others.
  let stopping = false;
  app.addHook('onSend', (request, reply, payload, done) => {
    if (stopping) {
      reply.header('connection', 'close');
      closesConnection(reply.raw);
    }
    closeAfterRefusedBody(request, reply, stopping);
    if (reply.statusCode >= 400 && request.headers.prefer !== undefined) acknowledgeHandling(request, reply);
    const int64 = request.routeOptions.config.int64;
    done(null, int64 === undefined ? payload : int64Answer(request, reply, payload, int64));
  });

  // 12. The access line (LOG_LEVEL info and below): one line per request, made by hand for the logger
  //     createLogger made (3.5 µs, about a quarter of pino's general path), handed to the batched destination.
  const accessLog = accessLogHook(app.log, logger);
  if (accessLog) {
    app.addHook('onResponse', accessLog);
    onFrameworkAnswer(app, (request, reply) => accessLog.call(app, request, reply, () => undefined));
  }

  // 13. Metrics (METRICS_PORT only; nothing when off): a count and a duration per answer, by route.
  if (metrics) installRequestMetrics(app, metrics);

  // Errors, from any step: one handler, one shape, 5xx details logged with the request id and never sent.
  installErrorHandling(app, settings.bodyLimit);

  return {
    deadlines,
    routes,
    stopping: () => void (stopping = true),
    rateLimits: counted,
    revoked: (tokenId) => verifier.forget(tokenId),
    services: [
      { name: 'request deadlines', start: () => deadlines.start(), stop: () => deadlines.stop() },
      { name: 'load shedding', start: () => overload.start(), stop: () => overload.stop() },
      ...(jwt ? [{ name: 'JWT keys', start: () => jwt.warmUp(), stop: () => jwt.close() }] : []),
    ],
  };
}
