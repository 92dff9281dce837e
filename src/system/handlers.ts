import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { send } from '../http/errors.js';
import type { Store } from '../store/store.js';

const Status = Type.Object({ status: Type.String(), store: Type.Optional(Type.String()) });

/** Health, readiness and the API's own description: public, so that probes and tools need no token. */
export function systemHandlers(store: Store, openApi: () => object) {
  return {
    Status,
    async health(_request: FastifyRequest, reply: FastifyReply) {
      return reply.send({ status: 'ok' });
    },
    async ready(request: FastifyRequest, reply: FastifyReply) {
      try {
        await store.ping();
      } catch (error) {
        request.log.warn({ err: error }, 'store not ready');
        reply.header('retry-after', '1');
        return send(reply, 503, 'not ready: the store does not answer');
      }
      return reply.send({ status: 'ready', store: store.kind });
    },
    async openapi(_request: FastifyRequest, reply: FastifyReply) {
      return reply.type('application/json').send(openApi());
    },
  };
}
