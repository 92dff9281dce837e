import { EVENT_TYPES, type EventType } from '../model/events.js';
import { registerEndpoint } from '../webhooks/endpoints.js';
import { ALLOW_PRIVATE_NETWORKS_HINT, WebhookUrlError } from '../webhooks/network-guard.js';
import { deliveryView, endpointView } from '../webhooks/views.js';
import { MESSAGE_STATUSES, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from '../webhooks/schema.js';
import { UsageError, type Command } from './command.js';
import { withStore } from './common.js';
import { printJson, printTable, say } from './output.js';

function events(names: string[] | undefined): EventType[] | undefined {
  if (names === undefined) return undefined;
  for (const name of names) {
    if (!(EVENT_TYPES as readonly string[]).includes(name)) throw new UsageError(`unknown event "${name}": the events are ${EVENT_TYPES.join(', ')}`);
  }
  return [...new Set(names)] as EventType[];
}

/** `plant-store webhook add|list|remove|deliveries`: the same rules as the /webhooks routes, against the store. */
export const webhookCommand: Command = {
  name: 'webhook',
  summary: 'Webhook endpoints: where the server announces plant changes, signed and retried; and their deliveries log.',
  usesStore: true,
  actions: {
    add: {
      summary: 'register an endpoint; prints it as JSON, secret included',
      details: 'The URL must reach public addresses only, unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true (a receiver on this machine, for development).',
      args: [{ name: 'URL', required: true, help: 'where deliveries are POSTed: an absolute http(s) URL' }],
      options: {
        event: { type: 'string', value: 'EVENT', multiple: true, help: `an event it gets, of ${EVENT_TYPES.join(', ')} (default: all)` },
        description: { type: 'string', value: 'TEXT', help: 'free text for people' },
      },
      async run(given) {
        const input = { url: given.args[0]!, events: events(given.strings('event')), description: given.string('description') };
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
        printJson({ ...endpointView(endpoint), secret });
      },
    },
    list: {
      summary: 'list endpoints (never their secrets)',
      options: { json: { type: 'boolean', help: 'as JSON, one object per endpoint' } },
      async run(given) {
        const endpoints = (await withStore((store) => store.webhooks.listEndpoints({ limit: 1_000_000 }))).map(endpointView);
        if (given.flag('json')) return printJson(endpoints);
        printTable(
          ['ID', 'URL', 'EVENTS', 'STATE'],
          endpoints.map((e) => [
            e.id,
            e.url,
            e.events.join(' '),
            e.enabled ? 'enabled' : `disabled${e.disabledReason ? `: ${e.disabledReason}` : ''}`,
          ]),
        );
      },
    },
    remove: {
      summary: 'delete an endpoint and its messages',
      args: [{ name: 'ID', required: true, help: 'the id of the endpoint (webhook list shows it)' }],
      async run(given) {
        const id = given.args[0]!;
        const { removed, where } = await withStore(async (store, _config, where) => ({ removed: await store.webhooks.deleteEndpoint(id), where }));
        if (!removed) throw new Error(`no webhook endpoint with id "${id}" in ${where}`);
        say(`removed webhook endpoint ${id} from ${where}`);
      },
    },
    deliveries: {
      summary: "an endpoint's messages, newest first: event, time, plant, status, attempts",
      args: [{ name: 'ID', required: true, help: 'the id of the endpoint' }],
      options: {
        status: {
          type: 'string',
          value: 'STATUS',
          choices: MESSAGE_STATUSES,
          help: `only the messages in this state: ${MESSAGE_STATUSES.join(', ')}`,
        },
        limit: { type: 'string', value: 'N', help: `the most to show, 1 to ${PAGE_LIMIT_MAX} (default ${PAGE_LIMIT_DEFAULT})` },
        json: { type: 'boolean', help: 'as JSON, one object per message' },
      },
      async run(given) {
        const id = given.args[0]!;
        const status = given.string('status') as (typeof MESSAGE_STATUSES)[number] | undefined;
        const text = given.string('limit');
        const limit = text === undefined ? PAGE_LIMIT_DEFAULT : /^\d+$/.test(text) ? Number(text) : NaN;
        if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_LIMIT_MAX) {
          throw new UsageError(`--limit must be a whole number from 1 to ${PAGE_LIMIT_MAX}, got "${text}"`);
        }
        const page = await withStore((store) => store.webhooks.listMessages(id, { status, limit }));
        if (page === undefined) throw new Error(`no webhook endpoint with id "${id}"`);
        const messages = page.map(deliveryView);
        if (given.flag('json')) return printJson(messages);
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
      },
    },
  },
};
