import { Type, type FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  NOT_MODIFIED,
  READ_PRECONDITION_FAILED,
  revalidationHeaders,
  sendResourceRevalidated,
  sendSerializedRevalidated,
  WRITE_PRECONDITION_FAILED,
  writePreconditionFailed,
} from '../http/caching.js';
import { errorResponses, HttpError, NoContent } from '../http/errors.js';
import { KEY_STATUSES } from '../http/idempotency.js';
import { example } from '../http/error-codes.js';
import { Deferred, writeOf, type Writes } from '../http/writes.js';
import { nextPage, startAfter, type PageLinkForm } from '../http/cursors.js';
import { nextLinkHeader, nextPageLink } from '../http/paging.js';
import type { WebhookStore } from '../store/webhook-store.js';
import type { Inputs } from '../store/writes.js';
import { answerCreated, answerRotated, asIfMatchNames as expectedByIfMatch, notFound } from './answers.js';
import { checkEndpointUrl, newEndpoint, type EndpointRules } from './endpoints.js';
import { ALLOW_PRIVATE_NETWORKS_HINT, HostLookupTimeout, WebhookUrlError } from './network-guard.js';
import {
  CreatedEndpoint,
  Endpoint,
  EndpointIdParams,
  EndpointListQuery,
  EndpointPatch,
  KeyedBodyHeaders,
  RotateHeaders,
  PatchHeaders,
  DeleteHeaders,
  NewEndpoint,
  PAGE_LIMIT_DEFAULT,
  ReadHeaders,
  RotatedSecret,
} from './schema.js';
import { newSecret } from './signing.js';
import { endpointView } from './views.js';

/** How long the secret before a rotation keeps signing deliveries beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export interface WebhookRouteOptions extends EndpointRules {
  webhooks: WebhookStore;
  writes: Writes;
  /** PAGE_LINKS (http/cursors.ts). */
  pageLinks?: PageLinkForm;
}

/** The reads' caching headers: a weak ETag of the answer, revalidated (an endpoint read holds no secret). */
export const CACHING = revalidationHeaders('weak');
/** One endpoint's: a strong ETag, which If-Match on its writes names. */
const RESOURCE_CACHING = revalidationHeaders('resource');

/** The 503 of a URL whose host's lookup did not answer within WEBHOOK_DNS_TIMEOUT_MS: retry after about as long. */
function lookupTimedOut({ host, timeoutMs }: HostLookupTimeout): HttpError {
  return new HttpError(
    'webhook_host_lookup_timeout',
    `body.url: the DNS lookup of the host ${host} did not answer within ${timeoutMs} ms; retry later`,
    {
      field: 'body.url',
      headers: { 'retry-after': String(Math.max(1, Math.ceil(timeoutMs / 1000))) },
    },
  );
}

/** The OpenAPI document's example of it. */
const LOOKUP_TIMED_OUT = lookupTimedOut(new HostLookupTimeout('shop.example', 5000));

/** The OpenAPI document's example of the webhook routes' 404. */
export const NOT_FOUND = notFound('ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C');

/**
 * Webhook endpoints: register, list, read, change, delete, rotate the secret (an endpoint's deliveries
 * are delivery-routes.ts's). All need the `webhooks:manage` scope. A URL must reach a public address unless
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS is set (network-guard.ts).
 */
export const webhookRoutes: FastifyPluginCallbackTypebox<WebhookRouteOptions> = (app, { webhooks, writes, pageLinks = 'signed', ...rules }, done) => {
  const asIfMatchNames = (request: FastifyRequest, reply: FastifyReply, id: string) => expectedByIfMatch(webhooks, request, reply, id);

  /**
   * A refused URL is the client's error: 400 naming the field. The address a host resolved to and the
   * rule it broke go to the log only (a warning: someone may be probing the internal network). A lookup
   * that did not answer in time is not the URL's fault (the same URL may pass a moment later) but the
   * resolver's, which the service uses: 503 with Retry-After, and a warning for the operator.
   */
  const asBadUrl =
    (request: FastifyRequest) =>
    (error: unknown): never => {
      if (error instanceof HostLookupTimeout) {
        request.log.warn({ host: error.host, timeoutMs: error.timeoutMs }, 'webhooks: DNS lookup of a URL host timed out');
        throw lookupTimedOut(error);
      }
      if (!(error instanceof WebhookUrlError)) throw error;
      if (error.refused) request.log.warn(error.refused, 'webhooks: URL refused: not a public address');
      throw new HttpError('invalid_webhook_url', `body.url ${error.message}${error.refused ? `; ${ALLOW_PRIVATE_NETWORKS_HINT}` : ''}`, {
        field: 'body.url',
      });
    };
  const auth = 'webhooks:manage' as const;

  app.post(
    '/webhooks',
    {
      config: { auth },
      schema: {
        operationId: 'createWebhookEndpoint',
        tags: ['webhooks'],
        summary: 'Registers a webhook endpoint (its signing secret is in this answer only)',
        body: NewEndpoint,
        bodyExample: { url: 'https://shop.example/hooks/plants', events: ['plant.created', 'plant.deleted'], description: 'the shop front' },
        headers: KeyedBodyHeaders,
        response: { 201: CreatedEndpoint, ...errorResponses(400, 401, 403, 413, 415, 503, ...KEY_STATUSES) },
        responseDescriptions: { 201: 'The endpoint, with its secret' },
        errorExamples: [
          example('validation_failed', 'body.events must not be empty', 'body.events'),
          example('invalid_webhook_url', 'body.url must be an absolute http:// or https:// URL', 'body.url'),
          LOOKUP_TIMED_OUT,
        ],
        responseHeaders: {
          201: { Location: { description: 'The URL of the endpoint created', schema: { type: 'string' } } },
        },
      },
    },
    async (request, reply) => {
      // The URL is checked (its DNS) only when the request runs: a retry of one that ran gets its answer.
      const endpoint = new Deferred<Inputs['createEndpoint']>(async (create) =>
        create({ endpoint: await newEndpoint(request.body, rules).catch(asBadUrl(request)) }),
      );
      return writes.apply(reply, writeOf(request, 'createEndpoint', endpoint), answerCreated);
    },
  );

  app.get(
    '/webhooks',
    {
      config: { auth },
      schema: {
        operationId: 'listWebhookEndpoints',
        tags: ['webhooks'],
        summary: 'Lists webhook endpoints in id order, a page at a time (Link: rel="next" when more remain)',
        querystring: EndpointListQuery,
        headers: ReadHeaders,
        response: { 200: Type.Array(Endpoint), 304: NoContent, ...errorResponses(400, 401, 403, 412, 503) },
        responseDescriptions: { 200: 'A page of endpoints', 304: NOT_MODIFIED },
        responseHeaders: { 200: { ...nextLinkHeader('endpoints'), ...CACHING }, 304: CACHING },
        errorExamples: [example('validation_failed', 'querystring.limit must be at most 1000', 'querystring.limit'), READ_PRECONDITION_FAILED],
      },
    },
    async (request, reply) => {
      const { limit = PAGE_LIMIT_DEFAULT } = request.query;
      const after = startAfter(request.query, 'webhooks');
      const page = await webhooks.listEndpoints({ limit: limit + 1, after });
      if (page.length > limit) {
        page.length = limit;
        reply.header('link', nextPageLink(request, nextPage(pageLinks, 'webhooks', '', page[limit - 1]!.id)));
      }
      return sendSerializedRevalidated(request, reply, page.map(endpointView));
    },
  );

  app.get(
    '/webhooks/:id',
    {
      config: { auth },
      schema: {
        operationId: 'getWebhookEndpoint',
        tags: ['webhooks'],
        summary: 'Reads a webhook endpoint (and why it was disabled, if it was)',
        params: EndpointIdParams,
        headers: ReadHeaders,
        response: { 200: Endpoint, 304: NoContent, ...errorResponses(401, 403, 404, 412, 503) },
        responseDescriptions: { 200: 'The endpoint', 304: NOT_MODIFIED },
        responseHeaders: { 200: RESOURCE_CACHING, 304: RESOURCE_CACHING },
        errorExamples: [NOT_FOUND, READ_PRECONDITION_FAILED],
      },
    },
    async (request, reply) => {
      const endpoint = await webhooks.getEndpoint(request.params.id);
      if (!endpoint) throw notFound(request.params.id);
      return sendResourceRevalidated(request, reply, endpointView(endpoint));
    },
  );

  app.patch(
    '/webhooks/:id',
    {
      config: { auth },
      schema: {
        operationId: 'patchWebhookEndpoint',
        tags: ['webhooks'],
        summary: 'Changes a webhook endpoint (JSON merge patch); {"enabled": true} turns it back on',
        params: EndpointIdParams,
        body: EndpointPatch,
        bodyExample: { enabled: true },
        headers: PatchHeaders,
        response: { 200: Endpoint, ...errorResponses(400, 401, 403, 404, 412, 413, 415, 503) },
        responseDescriptions: { 200: 'The endpoint, changed' },
        errorExamples: [
          example('validation_failed', 'body.enabled must be true or false', 'body.enabled'),
          example('invalid_webhook_url', 'body.url must be an absolute http:// or https:// URL', 'body.url'),
          LOOKUP_TIMED_OUT,
          NOT_FOUND,
          WRITE_PRECONDITION_FAILED,
        ],
      },
    },
    async (request, reply) => {
      const { events, description, int64, enabled } = request.body;
      const expected = await asIfMatchNames(request, reply, request.params.id);
      const url = request.body.url === undefined ? undefined : (await checkEndpointUrl(request.body.url, rules).catch(asBadUrl(request))).href;
      const endpoint = await webhooks.updateEndpoint(request.params.id, { url, events, description, int64, enabled }, expected);
      if (endpoint === 'changed') throw writePreconditionFailed();
      if (!endpoint) throw notFound(request.params.id);
      return reply.send(endpointView(endpoint));
    },
  );

  app.delete(
    '/webhooks/:id',
    {
      config: { auth },
      schema: {
        operationId: 'deleteWebhookEndpoint',
        tags: ['webhooks'],
        summary: 'Deletes a webhook endpoint and its messages',
        params: EndpointIdParams,
        headers: DeleteHeaders,
        response: { 204: NoContent, ...errorResponses(401, 403, 404, 412, 503) },
        responseDescriptions: { 204: 'Endpoint deleted' },
        errorExamples: [NOT_FOUND, WRITE_PRECONDITION_FAILED],
      },
    },
    async (request, reply) => {
      const deleted = await webhooks.deleteEndpoint(request.params.id, await asIfMatchNames(request, reply, request.params.id));
      if (deleted === 'changed') throw writePreconditionFailed();
      if (!deleted) throw notFound(request.params.id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      config: { auth },
      schema: {
        operationId: 'rotateWebhookSecret',
        tags: ['webhooks'],
        summary: 'Makes a new signing secret; for 24 hours deliveries carry signatures with both, the new one first',
        params: EndpointIdParams,
        headers: RotateHeaders,
        response: { 200: RotatedSecret, ...errorResponses(401, 403, 404, 412, 503, ...KEY_STATUSES) },
        responseDescriptions: { 200: 'The new secret (shown only here)' },
        errorExamples: [NOT_FOUND, WRITE_PRECONDITION_FAILED],
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      // If-Match is read only when the write is made: a retry answered from its key (the rotation done, the
      // endpoint's ETag changed by it) gets the secret it made, not a 412.
      const rotation = new Deferred<Inputs['rotateSecret']>(async (rotate) =>
        rotate({ id, secret: newSecret(), previousUntil: Date.now() + ROTATION_OVERLAP_MS, expected: await asIfMatchNames(request, reply, id) }),
      );
      return writes.apply(reply, writeOf(request, 'rotateSecret', rotation), answerRotated(id));
    },
  );

  done();
};
