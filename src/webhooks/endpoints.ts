import type { Int64Form, NewEndpointRecord, WebhookEndpoint, WebhookStore } from '../store/webhook-store.js';
import { EVENT_TYPES, type EventType } from '../model/events.js';
import { newId } from '../model/ids.js';
import { checkWebhookUrl, type Resolver } from './network-guard.js';
import { newSecret } from './signing.js';

export interface EndpointRules {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS. */
  allowPrivateNetworks: boolean;
  resolver?: Resolver | undefined;
  /** WEBHOOK_DNS_TIMEOUT_MS: how long the URL's host lookup is awaited (HostLookupTimeout past it); unbounded when left out. */
  lookupTimeoutMs?: number | undefined;
}

/**
 * Registers an endpoint, by the same rules from HTTP and from the CLI: the URL checked by the network
 * guard (a WebhookUrlError says why not) and kept in its normal form, all three events unless told
 * otherwise, a new secret.
 */
export async function registerEndpoint(
  webhooks: WebhookStore,
  input: EndpointInput,
  rules: EndpointRules,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const record = await newEndpoint(input, rules);
  return { endpoint: await webhooks.createEndpoint(record), secret: record.secret };
}

export interface EndpointInput {
  url: string;
  events?: EventType[] | undefined;
  description?: string | undefined;
  /** How its bodies write int64 values; numbers unless told. */
  int64?: Int64Form | undefined;
}

/** A URL checked as these rules say (network-guard.ts): WebhookUrlError when refused, HostLookupTimeout when its host's lookup did not answer in time. */
export function checkEndpointUrl(text: string, rules: EndpointRules): Promise<URL> {
  return checkWebhookUrl(text, { allowPrivate: rules.allowPrivateNetworks, resolver: rules.resolver, lookupTimeoutMs: rules.lookupTimeoutMs });
}

/** The endpoint registerEndpoint stores (its URL checked), before it is stored. */
export async function newEndpoint(input: EndpointInput, rules: EndpointRules): Promise<NewEndpointRecord> {
  const url = await checkEndpointUrl(input.url, rules);
  return {
    id: newId('ep'),
    // Stored as parsed, never as sent (a CR or LF in the text would otherwise be kept and shown).
    url: url.href,
    events: input.events ?? [...EVENT_TYPES],
    description: input.description,
    // Kept only when it is not the default, as the store shows it.
    ...(input.int64 === 'string' ? { int64: 'string' as const } : {}),
    secret: newSecret(),
    createdAt: Date.now(),
  };
}

/** The endpoint as the store will read it back once stored (enabled, a description and int64 only when it has them). */
export function storedEndpoint({ id, url, events, description, int64, createdAt }: NewEndpointRecord): WebhookEndpoint {
  return {
    id,
    url,
    events,
    ...(description === undefined ? {} : { description }),
    ...(int64 === 'string' ? { int64 } : {}),
    enabled: true,
    createdAt,
  };
}
