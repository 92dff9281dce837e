import type { FastifyReply, FastifyRequest } from 'fastify';
import { checkWriteIfMatch, writePreconditionFailed } from '../http/caching.js';
import { HttpError } from '../http/errors.js';
import type { Outcomes } from '../store/writes.js';
import type { WebhookEndpoint, WebhookStore } from '../store/webhook-store.js';
import { Endpoint } from './schema.js';
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

/**
 * With If-Match on a write under an endpoint's id, the endpoint as it is now, once the header names it
 * (else 412; a missing endpoint 404, RFC 9110 §13.2.1): the store's write then holds only while the
 * endpoint is still so, in its own transaction, so that two writes sent with one tag cannot both pass.
 * Undefined without If-Match, and for `*`, which asks only that it exist (the write finds that out: 404).
 */
export async function asIfMatchNames(
  webhooks: WebhookStore,
  request: FastifyRequest,
  reply: FastifyReply,
  id: string,
): Promise<WebhookEndpoint | undefined> {
  if (request.headers['if-match'] === undefined) return undefined;
  const current = await webhooks.getEndpoint(id);
  if (!current) throw notFound(id);
  checkWriteIfMatch(request, reply, endpointView(current), Endpoint);
  return request.headers['if-match'].trim() === '*' ? undefined : current;
}

/** POST /webhooks: 201 with the endpoint as stored, its secret (shown only here) and its Location. */
export function answerCreated(reply: FastifyReply, endpoint: Outcomes['createEndpoint']): FastifyReply {
  return reply
    .code(201)
    .header('location', `/webhooks/${endpoint.id}`)
    .send({ ...endpointView(storedEndpoint(endpoint)), secret: endpoint.secret });
}

/**
 * POST /webhooks/{id}/rotate-secret of endpoint `id` (its path's: a replay has the same path): 200 with the
 * new secret, or 404, or 412 (If-Match, judged in the write).
 */
export const answerRotated =
  (id: string) =>
  (reply: FastifyReply, rotated: Outcomes['rotateSecret']): FastifyReply => {
    if (rotated === 'not-found') throw notFound(id);
    if (rotated === 'changed') throw writePreconditionFailed();
    return reply.code(200).send({ secret: rotated.secret });
  };

/** POST /webhooks/{id}/replay of endpoint `id`: 202 with how many messages were queued again, or 404, or 412 (If-Match, judged in the write). */
export const answerReplayed =
  (id: string) =>
  (reply: FastifyReply, replayed: Outcomes['replay']): FastifyReply => {
    if (replayed === 'not-found') throw notFound(id);
    if (replayed === 'changed') throw writePreconditionFailed();
    return reply.code(202).send({ requeued: replayed.requeued });
  };
