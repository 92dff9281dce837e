import { Type, type FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { NOT_MODIFIED, READ_PRECONDITION_FAILED, sendSerializedRevalidated, WRITE_PRECONDITION_FAILED } from '../http/caching.js';
import { errorResponses, HttpError, NoContent } from '../http/errors.js';
import { KEY_STATUSES } from '../http/idempotency.js';
import { example } from '../http/error-codes.js';
import { Deferred, writeOf, type Writes } from '../http/writes.js';
import { nextPage, startAfter, type PageLinkForm } from '../http/cursors.js';
import { nextLinkHeader, nextPageLink } from '../http/paging.js';
import type { WebhookStore } from '../store/webhook-store.js';
import type { Inputs } from '../store/writes.js';
import { answerReplayed, asIfMatchNames, notFound } from './answers.js';
import { CACHING, NOT_FOUND } from './routes.js';
import { Delivery, DeliveryQuery, EndpointIdParams, ReplayHeaders, PAGE_LIMIT_DEFAULT, ReadHeaders, ReplayRequest, ReplayResult } from './schema.js';
import { deliveryView } from './views.js';
import { timestampMillis } from '../http/timestamps.js';

/** The 400 of a replay whose window ends before it starts. */
function untilBeforeSince(): HttpError {
  return new HttpError('validation_failed', 'body.until must not be before body.since', { field: 'body.until' });
}

/**
 * An endpoint's deliveries: its messages and their attempts, newest first, and the failed ones of a time
 * window sent again. `webhooks:manage`, as for the endpoints (routes.ts).
 */
export const webhookDeliveryRoutes: FastifyPluginCallbackTypebox<{ webhooks: WebhookStore; writes: Writes; pageLinks?: PageLinkForm }> = (
  app,
  { webhooks, writes, pageLinks = 'signed' },
  done,
) => {
  const auth = 'webhooks:manage' as const;

  app.get(
    '/webhooks/:id/deliveries',
    {
      config: { auth },
      schema: {
        operationId: 'listWebhookDeliveries',
        tags: ['webhooks'],
        summary: 'An endpoint\'s messages, newest first, a page at a time (Link: rel="next" when more remain)',
        params: EndpointIdParams,
        querystring: DeliveryQuery,
        headers: ReadHeaders,
        response: { 200: Type.Array(Delivery), 304: NoContent, ...errorResponses(400, 401, 403, 404, 412, 503) },
        responseDescriptions: { 200: 'A page of messages', 304: NOT_MODIFIED },
        responseHeaders: { 200: { ...nextLinkHeader('messages'), ...CACHING }, 304: CACHING },
        errorExamples: [
          example('validation_failed', 'querystring.status must be one of pending, delivered, failed', 'querystring.status'),
          NOT_FOUND,
          READ_PRECONDITION_FAILED,
        ],
      },
    },
    async (request, reply) => {
      const { status, limit = PAGE_LIMIT_DEFAULT } = request.query;
      // A cursor is for one endpoint's deliveries of one status.
      const scope = `${request.params.id} ${status ?? ''}`;
      const after = startAfter(request.query, 'deliveries', scope, 'the endpoint and status');
      const page = await webhooks.listMessages(request.params.id, { status, limit: limit + 1, after });
      if (page === undefined) throw notFound(request.params.id);
      if (page.length > limit) {
        page.length = limit;
        reply.header('link', nextPageLink(request, nextPage(pageLinks, 'deliveries', scope, page[limit - 1]!.id)));
      }
      return sendSerializedRevalidated(request, reply, page.map(deliveryView));
    },
  );

  app.post(
    '/webhooks/:id/replay',
    {
      config: { auth },
      schema: {
        operationId: 'replayWebhookMessages',
        tags: ['webhooks'],
        summary: "Sends the endpoint's failed messages whose event happened in a time window again (same webhook-id)",
        params: EndpointIdParams,
        body: ReplayRequest,
        bodyExample: { since: '2026-01-31T00:00:00Z', until: '2026-01-31T12:00:00Z' },
        headers: ReplayHeaders,
        response: { 202: ReplayResult, ...errorResponses(400, 401, 403, 404, 412, 413, 415, 503, ...KEY_STATUSES) },
        responseDescriptions: { 202: 'How many messages were queued again' },
        errorExamples: [untilBeforeSince(), NOT_FOUND, WRITE_PRECONDITION_FAILED],
      },
    },
    async (request, reply) => {
      // Both passed the date-time check, which takes exactly what timestampMillis reads.
      const since = timestampMillis(request.body.since)!;
      const until = request.body.until === undefined ? undefined : timestampMillis(request.body.until)!;
      if (until !== undefined && until < since) throw untilBeforeSince();
      const endpointId = request.params.id;
      // If-Match (the endpoint's ETag: replay only to it as read, its URL and events) is read only when the
      // write is made, never for a retry answered from its key.
      const replay = new Deferred<Inputs['replay']>(async (make) =>
        make({ endpointId, since, until, expected: await asIfMatchNames(webhooks, request, reply, endpointId) }),
      );
      return writes.apply(reply, writeOf(request, 'replay', replay), answerReplayed(endpointId));
    },
  );

  done();
};
