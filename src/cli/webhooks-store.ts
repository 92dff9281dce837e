import type { MessageStatus } from '../store/webhook-store.js';
import { registerEndpoint, type EndpointInput } from '../webhooks/endpoints.js';
import { ALLOW_PRIVATE_NETWORKS_HINT, WebhookUrlError } from '../webhooks/network-guard.js';
import { deliveryView, endpointView } from '../webhooks/views.js';
import { UsageError } from './command.js';
import { withStore } from './common.js';
import { printJson, say } from './output.js';
import { inApiOrder, printDeliveries, printEndpoints } from './webhook-output.js';

/** The webhook commands on the store DATABASE_URL names: an operator on the server's machine. Each write names the store. */

export async function add(input: EndpointInput): Promise<void> {
  // The same rules as POST /webhooks, the network guard included (WEBHOOK_ALLOW_PRIVATE_NETWORKS).
  const { endpoint, secret, where } = await withStore(async (store, config, where) => ({
    ...(await registerEndpoint(store.webhooks, input, { allowPrivateNetworks: config.webhookAllowPrivateNetworks })),
    where,
  })).catch((error: unknown) => {
    if (!(error instanceof WebhookUrlError)) throw error;
    // The operator at the CLI is told the address and rule, which an HTTP answer keeps for the log.
    const { address, rule } = error.refused ?? {};
    const refused = rule === undefined ? '' : `${address ? ` (${address}: ${rule})` : ` (${rule})`}; ${ALLOW_PRIVATE_NETWORKS_HINT}`;
    throw new UsageError(`URL ${error.message}${refused}`);
  });
  say(`registered webhook endpoint ${endpoint.id} in ${where}; its secret is shown only this once`);
  printJson(inApiOrder({ ...endpointView(endpoint), secret }));
}

export async function list(json: boolean): Promise<void> {
  printEndpoints((await withStore((store) => store.webhooks.listEndpoints({ limit: 1_000_000 }))).map(endpointView), json);
}

export async function remove(id: string): Promise<void> {
  const { removed, where } = await withStore(async (store, _config, where) => ({ removed: await store.webhooks.deleteEndpoint(id), where }));
  if (!removed) throw new Error(`no webhook endpoint with id "${id}" in ${where}`);
  say(`removed webhook endpoint ${id} from ${where}`);
}

export async function deliveries(id: string, status: MessageStatus | undefined, limit: number, json: boolean): Promise<void> {
  const page = await withStore((store) => store.webhooks.listMessages(id, { status, limit }));
  if (page === undefined) throw new Error(`no webhook endpoint with id "${id}"`);
  printDeliveries(page.map(deliveryView), json);
}
