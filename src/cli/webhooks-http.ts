import { randomUUID } from 'node:crypto';
import type { EventType } from '../model/event-types.js';
import type { Int64Form, MessageStatus } from '../store/webhook-store.js';
import type { Delivery, Endpoint } from '../webhooks/schema.js';
import { PAGE_LIMIT_MAX } from '../webhooks/schema.js';
import { AnswerLostError, Api, atService, nextStart } from './api.js';
import type { ApiTarget } from './api-target.js';
import { printJson, say } from './output.js';
import { inApiOrder, printDeliveries, printEndpoints } from './webhook-output.js';

/**
 * The webhook commands through a running service's API (--url): POST /webhooks, GET /webhooks, DELETE
 * /webhooks/{id}, GET /webhooks/{id}/deliveries, with the token in PLANT_STORE_TOKEN (which needs
 * webhooks:manage). Nothing here opens a store; the service applies its own rules (its network guard,
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS), and what it refuses comes out as its message.
 */

/** POST /webhooks's body, as the CLI sends it (test/cli/api-types.test.ts holds it, and the rest, to the document's). */
export interface NewEndpointBody {
  url: string;
  events?: EventType[];
  description?: string;
  int64?: Int64Form;
}

/** POST /webhooks's answer: the endpoint, and its secret, this once. */
export type CreatedEndpointAnswer = Endpoint & { secret: string };

/** GET /webhooks's query parameters. */
export type EndpointListQuery = {
  limit?: number;
  after?: string | undefined;
};

/** GET /webhooks/{id}/deliveries's query parameters. */
export type DeliveryQuery = {
  status?: MessageStatus | undefined;
  limit?: number;
};

/**
 * POST /webhooks with an Idempotency-Key of its own: should the connection be lost before the answer, the
 * request is sent once more with the same key, and the service answers it with the first one's answer (the
 * same endpoint, the same secret) if the first was done, rather than register a second endpoint.
 */
export async function add(
  target: ApiTarget,
  input: { url: string; events: EventType[] | undefined; description: string | undefined; int64: Int64Form | undefined },
): Promise<void> {
  const api = await Api.connect(target);
  const body: NewEndpointBody = { url: input.url };
  if (input.events !== undefined) body.events = input.events;
  if (input.description !== undefined) body.description = input.description;
  if (input.int64 !== undefined) body.int64 = input.int64;
  const answer = await api
    .call('post', '/webhooks', { body, headers: { 'idempotency-key': randomUUID() } }, { retry: 'Idempotency-Key' })
    .catch((error: unknown) => {
      if (!(error instanceof AnswerLostError)) throw error;
      throw new Error(
        `${error.message}: the endpoint may have been registered, its secret lost; "plant-store webhook list --url ${api.where}" shows whether it was (remove it, and add it again for a secret)`,
      );
    });
  const made = answer.data as CreatedEndpointAnswer;
  say(`registered webhook endpoint ${made.id} at ${api.where}; its secret is shown only this once`);
  printJson(inApiOrder(made));
}

/** Every endpoint, page after page (Link rel="next"). */
export async function list(target: ApiTarget, json: boolean): Promise<void> {
  const api = await Api.connect(target);
  const endpoints: Endpoint[] = [];
  let start: ReturnType<typeof nextStart> = {};
  while (start !== undefined) {
    const query: EndpointListQuery = { limit: PAGE_LIMIT_MAX, ...start };
    const { data, response } = await api.call('get', '/webhooks', { params: { query } });
    endpoints.push(...(data as Endpoint[]));
    start = nextStart(response.headers.get('link'));
  }
  printEndpoints(endpoints, json);
}

export async function remove(target: ApiTarget, id: string): Promise<void> {
  const api = await Api.connect(target);
  await api.call('delete', '/webhooks/{id}', { params: { path: { id } } }).catch(atService(api));
  say(`removed webhook endpoint ${id} at ${api.where}`);
}

/** One page of an endpoint's messages, newest first, as the store-side command shows. */
export async function deliveries(target: ApiTarget, id: string, status: MessageStatus | undefined, limit: number, json: boolean): Promise<void> {
  const api = await Api.connect(target);
  const query: DeliveryQuery = status === undefined ? { limit } : { status, limit };
  const { data } = await api.call('get', '/webhooks/{id}/deliveries', { params: { path: { id }, query } }).catch(atService(api));
  printDeliveries(data as Delivery[], json);
}
