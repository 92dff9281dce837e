import { Type, type FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { ErrorBody, send } from '../http/errors.js';
import type { Store } from '../store/store.js';

const Status = Type.Object({ status: Type.String(), store: Type.Optional(Type.String()) });
const NOT_READY = 'not ready: the store does not answer, or cannot take writes';

/** Health, readiness and the API's own description: public, so that probes and tools need no token. */
export const systemRoutes: FastifyPluginCallbackTypebox<{ store: Store; openApi: () => object }> = (app, { store, openApi }, done) => {
  app.get(
    '/healthz',
    {
      // Answered even while shedding load: the process is up, just busy.
      config: { auth: 'public', servesWhenOverloaded: true, probe: true },
      schema: {
        operationId: 'health',
        tags: ['system'],
        summary: 'The process is up',
        response: { 200: Status },
        responseDescriptions: { 200: 'Up' },
      },
    },
    async (_request, reply) => reply.send({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      config: { auth: 'public', probe: true },
      schema: {
        operationId: 'ready',
        tags: ['system'],
        summary: 'The store answers and can take writes',
        response: { 200: Status, 503: ErrorBody },
        responseDescriptions: { 200: 'Ready', 503: 'The store does not answer, or cannot take writes (PostgreSQL: no writable primary)' },
        errorExamples: { 503: NOT_READY },
      },
    },
    async (request, reply) => {
      try {
        await store.ping();
      } catch (error) {
        request.log.warn({ err: error }, 'store not ready');
        reply.header('retry-after', '1');
        return send(reply, 503, NOT_READY);
      }
      return reply.send({ status: 'ready', store: store.kind });
    },
  );

  app.get(
    '/openapi.json',
    {
      config: { auth: 'public' },
      schema: { operationId: 'openapi', tags: ['system'], summary: 'This OpenAPI 3.1 document', responseDescriptions: { 200: 'The document' } },
    },
    async (_request, reply) => reply.type('application/json').send(openApi()),
  );
  done();
};
