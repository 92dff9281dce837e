import type { FastifyReply } from 'fastify';
import { HttpError } from '../http/errors.js';
import type { RequestWrite } from '../http/writes.js';
import type { Outcomes } from '../store/writes.js';
import { storedEndpoint } from './endpoints.js';
import { endpointView } from './views.js';

/**
 * What the webhook routes answer: their 404, and the answers of the POSTs to what their write did. A POST
 * answers from its write's outcome with one function, without an Idempotency-Key, with one the first time
 * and on every replay of it (http/writes.ts), so that all three are the same bytes.
 */

export function notFound(id: string): HttpError {
  return new HttpError('not_found', `no webhook endpoint with id ${id}`);
}

/** POST /webhooks: 201 with the endpoint as stored, its secret (shown only here) and its Location. */
export function answerCreated(reply: FastifyReply, endpoint: Outcomes['createEndpoint']): FastifyReply {
  return reply
    .code(201)
    .header('location', `/webhooks/${endpoint.id}`)
    .send({ ...endpointView(storedEndpoint(endpoint)), secret: endpoint.secret });
}

/** POST /webhooks/{id}/rotate-secret: 200 with the new secret, or 404. */
export function answerRotated(reply: FastifyReply, rotated: Outcomes['rotateSecret'], { input }: RequestWrite<'rotateSecret'>): FastifyReply {
  if (rotated === 'not-found') throw notFound(input.id);
  return reply.code(200).send({ secret: rotated.secret });
}

/** POST /webhooks/{id}/replay: 202 with how many messages were queued again, or 404. */
export function answerReplayed(reply: FastifyReply, replayed: Outcomes['replay'], { input }: RequestWrite<'replay'>): FastifyReply {
  if (replayed === 'not-found') throw notFound(input.endpointId);
  return reply.code(202).send({ requeued: replayed.requeued });
}
