import { Type } from '@sinclair/typebox';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions, type RouteOptions } from 'fastify';
import { TokenVerifier } from './auth/tokens.js';
import { loadConfig, type Config } from './config.js';
import { authHook } from './http/auth.js';
import { errorResponses, ErrorBody, HttpError, installErrorHandling } from './http/errors.js';
import { JsonBodyError, parseJsonBody } from './http/json.js';
import { accessLogHook } from './http/access-log.js';
import { OverloadMonitor } from './http/overload.js';
import { MemoryRateLimiter, rateLimitHooks, SharedRateLimiter } from './http/rate-limit.js';
import { installSecurity } from './http/security.js';
import { configureServer, transportOptions } from './http/transport.js';
import { validatorCompiler } from './http/validation.js';
import { buildOpenApi } from './openapi.js';
import { plantHandlers } from './plants/handlers.js';
import { CreateHeaders, ListQuery, NewPlant, Plant, PlantIdParams, PlantMergePatch, PlantReplacement, StoredPlant } from './plants/schema.js';
import type { Store } from './store/store.js';
import { systemHandlers } from './system/handlers.js';

export interface AppOptions {
  /** Settings left out take their defaults (loadConfig of an empty environment). */
  config: Pick<Config, 'tokens' | 'bodyLimit'> & Partial<Config>;
  store: Store;
  /** Fastify's logger option: false in tests, a pino configuration in the server. */
  logger?: FastifyServerOptions['logger'];
}

let instance = 0;

/** The whole API. Every route is registered here, in one place, with the schema that validates, serializes and documents it. */
export async function buildApp({ config, store, logger = false }: AppOptions): Promise<FastifyInstance> {
  // Request ids unique across restarts and instances: a random prefix per app, then a counter.
  const prefix = `${process.pid.toString(36)}${(instance++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  let counter = 0;
  const settings: Config = { ...loadConfig({}), ...config };
  const app = Fastify({
    ...transportOptions(settings),
    logger,
    bodyLimit: config.bodyLimit,
    genReqId: () => `${prefix}-${(++counter).toString(36)}`,
    requestIdHeader: false,
    // One access line per request (below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { maxParamLength: 200 },
  });

  configureServer(app, settings);
  installErrorHandling(app, config.bodyLimit);
  app.setValidatorCompiler(validatorCompiler);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'buffer' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer));
    } catch (error) {
      const message = error instanceof JsonBodyError ? error.message : `body is not valid JSON: ${(error as Error).message}`;
      done(new HttpError(400, message), undefined);
    }
  });

  // Shedding and rate limits come before authentication: refusing must cost less than serving.
  const overload = new OverloadMonitor(settings, (reason) =>
    reason === undefined
      ? app.log.warn('load back to normal: no longer shedding')
      : app.log.warn({ reason }, `overloaded: answering 503 until it passes (${reason})`),
  );
  // x-request-id, security headers, the Host check and shedding: one hook (see http/security.ts).
  installSecurity(app, settings, (request) => overload.refusal(request));
  app.addHook('onReady', (done) => (overload.start(), done()));
  app.addHook('onClose', (_app, done) => (overload.stop(), done()));
  // Counted by the store where it is shared by several instances (PostgreSQL), else in this process.
  const limit = settings.rateLimitPerMinute;
  const limiter = store.rateCounter ? new SharedRateLimiter(limit, store.rateCounter) : new MemoryRateLimiter(limit);
  const rateLimit = limit > 0 ? rateLimitHooks(limiter) : undefined;
  if (rateLimit) app.addHook('onRequest', rateLimit.beforeAuth);
  const verifier = new TokenVerifier(config.tokens, store.tokens);
  app.addHook('onRequest', authHook(verifier));
  if (rateLimit) {
    app.addHook('onRequest', rateLimit.afterAuth);
    app.addHook('onResponse', rateLimit.onResponse);
  }
  // One access line per request, built cheaply (see http/access-log.ts).
  const accessLog = accessLogHook(app.log);
  if (accessLog) app.addHook('onResponse', accessLog);

  // Secure by default: a route that does not say who may call it is a bug, caught at start.
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    if (route.config?.auth === undefined) throw new Error(`route ${route.method} ${route.url} has no auth setting`);
    routes.push(route);
  });

  const plants = plantHandlers(store.plants);
  let openApi: object | undefined;
  const system = systemHandlers(store, () => (openApi ??= buildOpenApi(routes)));

  app.route({
    method: 'POST',
    url: '/plants',
    config: { auth: 'plants:write' },
    schema: {
      operationId: 'addPlant',
      summary: 'Creates a new plant in the store (or replaces the plant with that id)',
      headers: CreateHeaders,
      body: NewPlant,
      response: { 200: Plant, ...errorResponses(400, 401, 403, 412, 413, 415, 503) },
      responseDescriptions: { 200: 'Plant response' },
    },
    handler: plants.create,
  });
  app.route({
    method: 'GET',
    url: '/plants',
    config: { auth: 'plants:read' },
    schema: {
      operationId: 'listPlants',
      summary: 'Lists plants in ascending id order, a page at a time (Link: rel="next" when more remain)',
      querystring: ListQuery,
      response: { 200: Type.Array(StoredPlant), ...errorResponses(400, 401, 403, 503) },
      responseDescriptions: { 200: 'A page of plants' },
    },
    handler: plants.list,
  });
  app.route({
    method: 'GET',
    url: '/plants/:id',
    config: { auth: 'plants:read' },
    schema: {
      operationId: 'getPlant',
      summary: 'Reads one plant',
      params: PlantIdParams,
      response: { 200: StoredPlant, ...errorResponses(400, 401, 403, 404, 503) },
      responseDescriptions: { 200: 'The plant' },
    },
    handler: plants.read,
  });
  app.route({
    method: 'PUT',
    url: '/plants/:id',
    config: { auth: 'plants:write' },
    schema: {
      operationId: 'replacePlant',
      summary: 'Replaces the plant with this id, or creates it',
      params: PlantIdParams,
      body: PlantReplacement,
      response: { 200: StoredPlant, 201: StoredPlant, ...errorResponses(400, 401, 403, 413, 415, 503) },
      responseDescriptions: { 200: 'The plant, replaced', 201: 'The plant, created' },
    },
    handler: plants.replace,
  });
  app.route({
    method: 'PATCH',
    url: '/plants/:id',
    config: { auth: 'plants:write' },
    schema: {
      operationId: 'patchPlant',
      summary: 'Changes some fields of a plant (JSON merge patch; "tag": null removes the tag)',
      params: PlantIdParams,
      body: PlantMergePatch,
      response: { 200: StoredPlant, ...errorResponses(400, 401, 403, 404, 413, 415, 503) },
      responseDescriptions: { 200: 'The plant, changed' },
    },
    handler: plants.patch,
  });
  app.route({
    method: 'DELETE',
    url: '/plants/:id',
    config: { auth: 'plants:write' },
    schema: {
      operationId: 'deletePlant',
      summary: 'Deletes a plant',
      params: PlantIdParams,
      response: errorResponses(400, 401, 403, 404, 503),
      responseDescriptions: { 204: 'Plant deleted' },
    },
    handler: plants.remove,
  });

  app.route({
    method: 'GET',
    url: '/healthz',
    config: { auth: 'public' },
    schema: { operationId: 'health', summary: 'The process is up', response: { 200: system.Status }, responseDescriptions: { 200: 'Up' } },
    handler: system.health,
  });
  app.route({
    method: 'GET',
    url: '/readyz',
    config: { auth: 'public' },
    schema: {
      operationId: 'ready',
      summary: 'The store answers',
      response: { 200: system.Status, 503: ErrorBody },
      responseDescriptions: { 200: 'Ready', 503: 'The store does not answer' },
    },
    handler: system.ready,
  });
  app.route({
    method: 'GET',
    url: '/openapi.json',
    config: { auth: 'public' },
    schema: { operationId: 'openapi', summary: 'This OpenAPI 3.1 document', responseDescriptions: { 200: 'The document' } },
    handler: system.openapi,
  });

  return app;
}
