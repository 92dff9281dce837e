import { Type, type FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { hash } from 'node:crypto';
import {
  ConditionalReadHeaders,
  NOT_MODIFIED,
  READ_PRECONDITION_FAILED,
  REVALIDATE_PUBLIC,
  revalidated,
  revalidationHeaders,
} from '../http/caching.js';
import { ErrorBody, send } from '../http/errors.js';
import { example } from '../http/error-codes.js';
import { StoreUnavailableError, type Store } from '../store/store.js';
import { VERSION } from '../version.js';

/** GET /healthz: the process is up, and which release answers (during a rolling upgrade or a reload, several may). */
export const Health = Type.Object(
  {
    status: Type.Literal('ok'),
    version: Type.String({ description: "The service's version (package.json's), semantic versioning", examples: [VERSION] }),
  },
  { additionalProperties: false, description: 'The process is up; its version' },
);

/** GET /readyz: the store answers and takes writes. */
export const Readiness = Type.Object(
  {
    status: Type.Literal('ready'),
    store: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')], { description: 'The store this instance serves from' }),
  },
  { additionalProperties: false, description: 'Ready for requests' },
);

const NOT_READY = 'not ready: the store does not answer, or cannot take writes';
const LEAVING = 'not ready: this instance is stopping; it still serves what it is sent until its listener closes, but send new requests to another';

/** Health, readiness and the API's own description: public, so that probes and tools need no token. */
export const systemRoutes: FastifyPluginCallbackTypebox<{
  store: Store;
  openApi: () => object;
  /** True once the instance is leaving (SIGTERM's drain): /readyz answers 503. */
  leaving?: () => boolean;
}> = (app, { store, openApi, leaving }, done) => {
  // The store's writability, logged once as it is lost and once as it returns, as the overload shedder does:
  // the writes refused meanwhile (and the probes) say nothing more, where a full disk refusing 20,000
  // writes wrote 19 MB of error lines, onto the full disk perhaps.
  store.onHealthChange?.((problem) => {
    if (problem === undefined) app.log.warn('store available again: a write committed; writes and /readyz are back');
    else app.log.error({ err: problem.cause ?? problem }, `store unavailable: writes answer 503 and /readyz is not ready (${problem.message})`);
  });
  const health = { status: 'ok' as const, version: VERSION };
  app.get(
    '/healthz',
    {
      // Answered even while shedding load, and while stopping: the process is up, just busy or leaving.
      config: { auth: 'public', servesWhenOverloaded: true, probe: true },
      schema: {
        operationId: 'health',
        tags: ['system'],
        summary: 'The process is up, and its version',
        response: { 200: Health },
        responseDescriptions: { 200: 'Up: `{"status": "ok", "version": "…"}`' },
      },
    },
    async (_request, reply) => reply.send(health),
  );

  app.get(
    '/readyz',
    {
      config: { auth: 'public', probe: true },
      schema: {
        operationId: 'ready',
        tags: ['system'],
        summary: 'The store answers and can take writes, and the instance is not stopping',
        response: { 200: Readiness, 503: ErrorBody },
        responseDescriptions: {
          200: 'Ready',
          503: 'The store does not answer, or cannot take writes (PostgreSQL: no writable primary); or the instance is stopping (from SIGTERM on, for `SHUTDOWN_DRAIN_MS`, while it still serves every other request)',
        },
        errorExamples: [example('not_ready', NOT_READY), example('stopping', LEAVING)],
      },
    },
    async (request, reply) => {
      // A load balancer checking this takes the instance out of rotation before its listener closes.
      if (leaving?.() === true) return send(reply, 'stopping', LEAVING);
      try {
        await store.ping();
      } catch (error) {
        if (!(error instanceof StoreUnavailableError && error.reported)) request.log.warn({ err: error }, 'store not ready');
        reply.header('retry-after', '1');
        return send(reply, 'not_ready', NOT_READY);
      }
      return reply.send({ status: 'ready', store: store.kind });
    },
  );

  // The document, made once (when first asked), and its ETag: the same bytes until the service changes.
  // Its 200 is declared as JSON (an object: the document describes itself, not here again), so that a tool
  // checking answers against the document finds the media type it is sent in.
  let document: { json: string; etag: string } | undefined;
  const caching = revalidationHeaders('strong', [], REVALIDATE_PUBLIC);
  app.get(
    '/openapi.json',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'openapi',
        tags: ['system'],
        summary: 'This OpenAPI 3.1 document',
        headers: Type.Object(ConditionalReadHeaders),
        responseMediaTypes: { 200: { 'application/json': { schema: { type: 'object', description: 'An OpenAPI 3.1 document' } } } },
        responseDescriptions: { 200: 'The document', 304: NOT_MODIFIED },
        responseHeaders: { 200: caching, 304: caching },
        errorExamples: [READ_PRECONDITION_FAILED],
      },
    },
    async (request, reply) => {
      if (document === undefined) {
        const json = JSON.stringify(openApi());
        document = { json, etag: `"${hash('sha1', json, 'base64url')}"` };
      }
      if (revalidated(request, reply, document.etag, REVALIDATE_PUBLIC)) return reply.code(304).send();
      return reply.type('application/json').send(document.json);
    },
  );
  done();
};
