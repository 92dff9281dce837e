import type { Delivery, Endpoint } from '../webhooks/schema.js';
import { printJson, printTable } from './output.js';

/** Webhook endpoints and deliveries as `webhook list` and `webhook deliveries` print them, the same from the store and from a service. */

/** An endpoint's fields in the order the API gives them (its schema's), whichever way it was read. */
export function inApiOrder<E extends Endpoint>({
  id,
  url,
  events,
  description,
  int64,
  enabled,
  disabledReason,
  previousSecretUntil,
  createdAt,
  ...rest
}: E): E {
  return {
    id,
    url,
    events,
    ...(description === undefined ? {} : { description }),
    ...(int64 === undefined ? {} : { int64 }),
    enabled,
    ...(disabledReason === undefined ? {} : { disabledReason }),
    ...(previousSecretUntil === undefined ? {} : { previousSecretUntil }),
    createdAt,
    ...rest,
  } as E;
}

export function printEndpoints(endpoints: readonly Endpoint[], json: boolean): void {
  if (json) return printJson(endpoints.map(inApiOrder));
  printTable(
    ['ID', 'URL', 'EVENTS', 'STATE'],
    endpoints.map((e) => [e.id, e.url, e.events.join(' '), e.enabled ? 'enabled' : `disabled${e.disabledReason ? `: ${e.disabledReason}` : ''}`]),
  );
}

export function printDeliveries(messages: readonly Delivery[], json: boolean): void {
  if (json) return printJson(messages);
  printTable(
    ['ID', 'TYPE', 'PLANT', 'EVENT TIME', 'STATUS', 'ATTEMPTS', 'LAST ATTEMPT', 'LAST STATUS', 'NEXT ATTEMPT', 'LAST ERROR'],
    messages.map((m) => [
      m.id,
      m.type,
      String(m.plantId),
      m.occurredAt,
      m.status,
      String(m.attempts),
      m.lastAttemptAt ?? '-',
      String(m.lastStatus ?? '-'),
      m.nextAttemptAt ?? '-',
      m.lastError ?? '',
    ]),
  );
}
