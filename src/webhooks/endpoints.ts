import type { WebhookEndpoint, WebhookStore } from '../store/webhook-store.js';
import { EVENT_TYPES, type EventType } from '../model/events.js';
import { newId } from '../model/ids.js';
import { checkWebhookUrl, type Resolver } from './network-guard.js';
import { newSecret } from './signing.js';

export interface EndpointRules {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS. */
  allowPrivateNetworks: boolean;
  resolver?: Resolver | undefined;
}

/**
 * Registers an endpoint, by the same rules from HTTP and from the CLI: the URL checked by the network
 * guard (a WebhookUrlError says why not) and kept in its normal form, all three events unless told
 * otherwise, a new secret.
 */
export async function registerEndpoint(
  webhooks: WebhookStore,
  input: { url: string; events?: EventType[] | undefined; description?: string | undefined },
  rules: EndpointRules,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const url = await checkWebhookUrl(input.url, { allowPrivate: rules.allowPrivateNetworks, resolver: rules.resolver });
  const secret = newSecret();
  const endpoint = await webhooks.createEndpoint({
    id: newId('ep'),
    // Stored as parsed, never as sent (a CR or LF in the text would otherwise be kept and shown).
    url: url.href,
    events: input.events ?? [...EVENT_TYPES],
    description: input.description,
    secret,
    createdAt: Date.now(),
  });
  return { endpoint, secret };
}
