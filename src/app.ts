import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyInstance, type RouteOptions } from 'fastify';
import type { Logger } from 'pino';
import { loadConfig, type Config } from './config/config.js';
import { consoleRoutes } from './console/routes.js';
import { docsRoutes } from './docs/routes.js';
import { Feed } from './events/feed.js';
import { eventRoutes } from './events/routes.js';
import { streamRoomWarnings } from './config/events.js';
import { FeedEventSchema } from './events/schema.js';
import { requireRouteAuth } from './http/auth.js';
import { installErrorHandling } from './http/errors.js';
import { installRequestHooks } from './http/hooks.js';
import { Idempotency } from './http/idempotency.js';
import { installJsonParser } from './http/json.js';
import { lazyRequestLogger } from './logging/logger.js';
import { configureServer, transportOptions } from './http/transport.js';
import { requireStrictQueries } from './http/strict-query.js';
import { installUnknownFields } from './http/unknown-fields.js';
import { refuseRepeatedHeaders } from './http/repeated-headers.js';
import { validatorCompiler } from './http/validation.js';
import { installRequestMetrics } from './metrics/hooks.js';
import type { Metrics } from './metrics/registry.js';
import { buildOpenApi } from './openapi/document.js';
import { plantImportRoute } from './plants/import-route.js';
import { plantRoutes } from './plants/routes.js';
import { namedSchemas } from './plants/schema.js';
import type { Store } from './store/store.js';
import { systemRoutes } from './system/routes.js';
import { tokenRoutes } from './tokens/routes.js';
import { CreatedToken, NewToken, Token, TokenInfo } from './tokens/schema.js';
import type { Tracing } from './tracing/sdk.js';
import { SIGNING, WEBHOOK_EVENTS, webhookSchemas } from './webhooks/events-doc.js';
import { webhookRoutes } from './webhooks/routes.js';

export interface AppOptions {
  /** Settings left out take their defaults (loadConfig of an empty environment). */
  config: Pick<Config, 'tokens' | 'bodyLimit'> & Partial<Config>;
  store: Store;
  /** The logger (logging/logger.ts createLogger); none when left out, as in most tests. */
  logger?: Logger;
  /** Prometheus metrics (METRICS_PORT): every answer is counted into them. None: no metrics hook at all. */
  metrics?: Metrics | undefined;
  /** OpenTelemetry traces (tracing/sdk.ts): a span per request. None: no tracing hook at all. */
  tracing?: Tracing | undefined;
}

let instance = 0;

/** Request ids unique across restarts and instances: a random prefix per app, then a counter. */
function requestIds(): () => string {
  const prefix = `${process.pid.toString(36)}${(instance++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  let counter = 0;
  return () => `${prefix}-${(++counter).toString(36)}`;
}

/** The whole API: the wiring first, then every route module, in one place. */
export async function buildApp({ config, store, logger, metrics, tracing }: AppOptions): Promise<FastifyInstance> {
  const settings: Config = { ...loadConfig({}), ...config };
  const app = Fastify({
    ...transportOptions(settings),
    ...(logger ? { loggerInstance: logger, childLoggerFactory: lazyRequestLogger } : { logger: false }),
    bodyLimit: settings.bodyLimit,
    genReqId: requestIds(),
    requestIdHeader: false,
    // One access line per request (http/hooks.ts) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { maxParamLength: 200 },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // First, so that a request's span covers every hook, and before the routes, whose handlers it wraps.
  if (tracing) tracing.installRequestSpans(app);
  const deadlines = configureServer(app, settings);
  installErrorHandling(app, settings.bodyLimit);
  installJsonParser(app);
  app.setValidatorCompiler(validatorCompiler);
  installRequestHooks(app, settings, store, logger);
  // Served on a listener of its own (metrics/server.ts), never by this app: no route, no auth rule here.
  if (metrics) installRequestMetrics(app, metrics);

  // The API, resource by resource. Every route says who may call it (config.auth).
  const routes: RouteOptions[] = [];
  requireRouteAuth(app, (route) => routes.push(route));
  // Every operation refuses a query parameter it does not take (400 naming it).
  requireStrictQueries(app);
  // Every write's body fields it does not know: ignored and said (Warning), or refused (UNKNOWN_FIELDS, Prefer: handling).
  installUnknownFields(app, settings.unknownFields === 'refuse' ? 'strict' : 'lenient');
  // A header that must come once (Idempotency-Key), sent twice: 400 naming it, not one value joined by Node.
  refuseRepeatedHeaders(app);
  let openApi: object | undefined;
  // Idempotency-Key on every POST: the outcomes kept in the store, the keys running now in this process.
  const idempotency = new Idempotency(store.idempotency, settings.idempotencyKeyTtlSeconds * 1000, metrics?.idempotency);
  await app.register(plantRoutes, { plants: store.plants, idempotency, exportIdleTimeoutMs: settings.exportIdleTimeoutMs });
  await app.register(plantImportRoute, {
    plants: store.plants,
    idempotency,
    bodyLimit: settings.importBodyLimit,
    maxRowBytes: settings.importMaxRowBytes,
    timeoutMs: settings.importTimeoutMs,
    deadlines,
    unknownFields: settings.unknownFields === 'refuse' ? 'strict' : 'lenient',
  });
  await app.register(webhookRoutes, { webhooks: store.webhooks, idempotency, allowPrivateNetworks: settings.webhookAllowPrivateNetworks });
  const feed = new Feed(
    store.events,
    store.tokens,
    {
      maxStreams: settings.eventsMaxStreams,
      perToken: settings.eventsMaxStreamsPerToken,
      perAddress: settings.eventsMaxStreamsPerAddress,
      heartbeatMs: settings.eventsHeartbeatMs,
      retryMs: settings.eventsRetryMs,
      pollMs: settings.eventsPollMs,
      maxBacklogBytes: settings.eventsMaxBacklogBytes,
    },
    app.log,
    metrics?.feed,
  );
  await app.register(eventRoutes, { feed, events: store.events });
  for (const warning of streamRoomWarnings(settings)) app.log.warn(warning);
  await app.register(tokenRoutes, {
    tokens: store.tokens,
    idempotency,
    unlisted: [
      ...(settings.tokens.length > 0 ? (['static'] as const) : []),
      ...(settings.jwtJwksUrl !== '' || settings.jwtPublicKey !== '' || settings.jwtSecret !== '' ? (['jwt'] as const) : []),
    ],
  });
  const documented = {
    schemas: [
      ...namedSchemas,
      ...webhookSchemas,
      ['Event', FeedEventSchema] as const,
      ['TokenInfo', TokenInfo] as const,
      ['Token', Token] as const,
      ['NewToken', NewToken] as const,
      ['CreatedToken', CreatedToken] as const,
    ],
    webhooks: WEBHOOK_EVENTS,
    signing: SIGNING,
    bodyLimit: settings.bodyLimit,
  };
  await app.register(systemRoutes, { store, openApi: () => (openApi ??= buildOpenApi(routes, documented)) });
  await app.register(docsRoutes);
  await app.register(consoleRoutes, { enabled: settings.console });
  return app;
}
