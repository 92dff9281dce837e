import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { installPipeline, serverOptions } from './app/pipeline.js';
import { runWithApp } from './app/services.js';
import { loadConfig, type Config } from './config/config.js';
import { streamRoomWarnings } from './config/events.js';
import { consoleRoutes } from './console/routes.js';
import { docsRoutes } from './docs/routes.js';
import { Feed } from './events/feed.js';
import { eventRoutes } from './events/routes.js';
import { FeedEventSchema } from './events/schema.js';
import type { MemoryRateLimiter } from './http/rate-limit.js';
import { Writes } from './http/writes.js';
import type { Metrics } from './metrics/registry.js';
import { buildOpenApi } from './openapi/document.js';
import { plantImportRoute } from './plants/import-route.js';
import { plantListRoute } from './plants/list-route.js';
import { plantRoutes } from './plants/routes.js';
import { namedSchemas } from './plants/schema.js';
import type { RateCounter, Store } from './store/store.js';
import { Health, Readiness, systemRoutes } from './system/routes.js';
import { tokenRoutes } from './tokens/routes.js';
import { CreatedToken, NewToken, Token, TokenInfo } from './tokens/schema.js';
import type { Tracing } from './tracing/sdk.js';
import { SIGNING, WEBHOOK_EVENTS, webhookSchemas } from './webhooks/events-doc.js';
import { webhookDeliveryRoutes } from './webhooks/delivery-routes.js';
import { webhookRoutes } from './webhooks/routes.js';
import type { Resolver } from './webhooks/network-guard.js';

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
  /** Where the rate limits count when the store counts none: the supervisor of several workers (process/rate-counter.ts). */
  rateCounter?: RateCounter | undefined;
  /** Tells the instance's other workers of a token revoked here, resolving once they refuse it (process/revocations.ts). */
  tellRevoked?: ((tokenId: string) => Promise<void>) | undefined;
  /** The DNS lookup of webhook URLs' hosts as they are registered (network-guard.ts); the system's when left out (tests give a fake one). */
  webhookResolver?: Resolver | undefined;
}

/**
 * An app, and what the process tells it as it stops: `stopping` from the first moment (answers then say
 * Connection: close), with `leaving` when a load balancer must take the instance out (`/readyz` then answers
 * 503 while everything else is still served: the drain of a SIGTERM).
 */
export type App = FastifyInstance & {
  stopping(options: { leaving: boolean }): void;
  /** Ends every event stream cleanly now, ahead of the close (their clients reconnect, to another process). */
  endStreams(): Promise<void>;
  /** The rate limits' counts when the process keeps them (SQLite), handed on to the process that replaces it. */
  rateLimits: Pick<MemoryRateLimiter, 'counted' | 'absorb'> | undefined;
  /** Refuses a token another worker of the instance revoked from the next request on (its cached look-ups forgotten). */
  forgetToken(tokenId: string): void;
};

/** The whole API: what every request passes through (app/pipeline.ts), then every route module, in one place. */
export async function buildApp({ config, store, logger, metrics, tracing, rateCounter, tellRevoked, webhookResolver }: AppOptions): Promise<App> {
  const settings: Config = { ...loadConfig({}), ...config };
  const app = Fastify(serverOptions(settings, logger)).withTypeProvider<TypeBoxTypeProvider>();
  const pipeline = installPipeline(app, { settings, store, logger, metrics, tracing, rateCounter });

  // The writes of every POST, one way in, with an Idempotency-Key or without: the keys running now in this process.
  const writes = new Writes(store, settings.idempotencyKeyTtlSeconds * 1000, metrics?.idempotency);
  // The change feed's one reader of the store, handing new events to every open stream of this app.
  const feed = new Feed(store.events, store.tokens, feedSettings(settings), app.log, metrics?.feed);
  for (const warning of streamRoomWarnings(settings)) app.log.warn(warning);
  const services = runWithApp(app, [...pipeline.services, { name: 'change feed', stopsFirst: true, stop: () => feed.close() }]);

  // The API, resource by resource. Every route says who may call it (config.auth).
  await app.register(plantRoutes, { plants: store.plants, writes });
  await app.register(plantListRoute, { plants: store.plants, exportIdleTimeoutMs: settings.exportIdleTimeoutMs, pageLinks: settings.pageLinks });
  await app.register(plantImportRoute, {
    plants: store.plants,
    writes,
    bodyLimit: settings.importBodyLimit,
    maxRowBytes: settings.importMaxRowBytes,
    timeoutMs: settings.importTimeoutMs,
    deadlines: pipeline.deadlines,
    unknownFields: settings.unknownFields === 'refuse' ? 'strict' : 'lenient',
  });
  await app.register(webhookRoutes, {
    webhooks: store.webhooks,
    writes,
    allowPrivateNetworks: settings.webhookAllowPrivateNetworks,
    resolver: webhookResolver,
    lookupTimeoutMs: settings.webhookDnsTimeoutMs,
    pageLinks: settings.pageLinks,
  });
  await app.register(webhookDeliveryRoutes, { webhooks: store.webhooks, writes, pageLinks: settings.pageLinks });
  await app.register(eventRoutes, { feed, events: store.events, pageLinks: settings.pageLinks });
  await app.register(tokenRoutes, {
    tokens: store.tokens,
    writes,
    unlisted: unlistedTokens(settings),
    revoked: (tokenId) => {
      pipeline.revoked(tokenId);
      return tellRevoked?.(tokenId);
    },
    pageLinks: settings.pageLinks,
  });
  let openApi: object | undefined;
  const documented = {
    schemas: [
      ...namedSchemas,
      ...webhookSchemas,
      ...([
        ['Event', FeedEventSchema],
        ['TokenInfo', TokenInfo],
        ['Token', Token],
        ['NewToken', NewToken],
        ['CreatedToken', CreatedToken],
        ['Health', Health],
        ['Readiness', Readiness],
      ] as const),
    ],
    webhooks: WEBHOOK_EVENTS,
    signing: SIGNING,
    bodyLimit: settings.bodyLimit,
  };
  let leaving = false;
  await app.register(systemRoutes, { store, openApi: () => (openApi ??= buildOpenApi(pipeline.routes, documented)), leaving: () => leaving });
  await app.register(docsRoutes);
  await app.register(consoleRoutes, { enabled: settings.console });
  return Object.assign(app, {
    rateLimits: pipeline.rateLimits,
    forgetToken: pipeline.revoked,
    endStreams: () => services.stopFirst(),
    stopping(options: { leaving: boolean }) {
      pipeline.stopping();
      leaving ||= options.leaving;
    },
  });
}

/** The change feed's settings (EVENTS_*). */
function feedSettings(settings: Config): ConstructorParameters<typeof Feed>[2] {
  return {
    maxStreams: settings.eventsMaxStreams,
    perToken: settings.eventsMaxStreamsPerToken,
    perAddress: settings.eventsMaxStreamsPerAddress,
    heartbeatMs: settings.eventsHeartbeatMs,
    retryMs: settings.eventsRetryMs,
    pollMs: settings.eventsPollMs,
    maxBacklogBytes: settings.eventsMaxBacklogBytes,
  };
}

/** The tokens the service accepts that are not stored, and so not listed by GET /tokens: static ones, JWTs. */
function unlistedTokens(settings: Config): Array<'static' | 'jwt'> {
  const jwt = settings.jwtJwksUrl !== '' || settings.jwtPublicKey !== '' || settings.jwtSecret !== '';
  return [...(settings.tokens.length > 0 ? (['static'] as const) : []), ...(jwt ? (['jwt'] as const) : [])];
}
