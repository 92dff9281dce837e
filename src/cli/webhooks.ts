import { parseArgs } from 'node:util';
import { EVENT_TYPES, type EventType } from '../webhooks/events.js';
import { registerEndpoint } from '../webhooks/endpoints.js';
import { WebhookUrlError } from '../webhooks/network-guard.js';
import { deliveryView, endpointView } from '../webhooks/views.js';
import { MESSAGE_STATUSES, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from '../webhooks/schema.js';
import { printJson, printTable, usage, UsageError, withStore } from './common.js';

export const WEBHOOK_USAGE = `  webhook add URL [--event EVENT]... [--description TEXT]
                                               register an endpoint; prints it as JSON, secret included
                                               events: ${EVENT_TYPES.join(', ')} (default: all)
  webhook list [--json]                        list endpoints (never their secrets)
  webhook remove ID                            delete an endpoint and its messages
  webhook deliveries ID [--status S] [--limit N] [--json]
                                               an endpoint's messages, newest first
                                               statuses: ${MESSAGE_STATUSES.join(', ')}`;

function events(names: string[] | undefined): EventType[] | undefined {
  if (names === undefined) return undefined;
  for (const name of names) {
    if (!(EVENT_TYPES as readonly string[]).includes(name)) throw new UsageError(`unknown event "${name}": the events are ${EVENT_TYPES.join(', ')}`);
  }
  return [...new Set(names)] as EventType[];
}

export async function webhookCommand(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const { values, positionals } = usage(() =>
    parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        event: { type: 'string', multiple: true },
        description: { type: 'string' },
        status: { type: 'string' },
        limit: { type: 'string' },
        json: { type: 'boolean' },
      },
    }),
  );
  switch (action) {
    case 'add': {
      const url = positionals[0];
      if (!url) throw new UsageError('webhook add needs the URL of the endpoint');
      const input = { url, events: events(values.event), description: values.description };
      // The same rules as POST /webhooks, the network guard included (WEBHOOK_ALLOW_PRIVATE_NETWORKS).
      const { endpoint, secret } = await withStore((store, config) =>
        registerEndpoint(store.webhooks, input, { allowPrivateNetworks: config.webhookAllowPrivateNetworks }),
      ).catch((error: unknown) => {
        if (!(error instanceof WebhookUrlError)) throw error;
        // The operator at the CLI is told the address and rule, which an HTTP answer keeps for the log.
        const refused = error.refused ? ` (${error.refused.address}: ${error.refused.rule})` : '';
        throw new UsageError(`URL ${error.message}${refused}`);
      });
      process.stderr.write(`registered webhook endpoint ${endpoint.id}; its secret is shown only this once\n`);
      return printJson({ ...endpointView(endpoint), secret });
    }
    case 'list': {
      const endpoints = (await withStore((store) => store.webhooks.listEndpoints({ limit: 1_000_000 }))).map(endpointView);
      if (values.json) return printJson(endpoints);
      printTable(
        ['ID', 'URL', 'EVENTS', 'STATE'],
        endpoints.map((e) => [e.id, e.url, e.events.join(' '), e.enabled ? 'enabled' : `disabled${e.disabledReason ? `: ${e.disabledReason}` : ''}`]),
      );
      return;
    }
    case 'remove': {
      const id = positionals[0];
      if (!id) throw new UsageError('webhook remove needs the id of an endpoint');
      if (!(await withStore((store) => store.webhooks.deleteEndpoint(id)))) throw new Error(`no webhook endpoint with id "${id}"`);
      process.stderr.write(`removed webhook endpoint ${id}\n`);
      return;
    }
    case 'deliveries': {
      const id = positionals[0];
      if (!id) throw new UsageError('webhook deliveries needs the id of an endpoint');
      const status = values.status;
      if (status !== undefined && !(MESSAGE_STATUSES as readonly string[]).includes(status)) {
        throw new UsageError(`unknown status "${status}": the statuses are ${MESSAGE_STATUSES.join(', ')}`);
      }
      const limit = values.limit === undefined ? PAGE_LIMIT_DEFAULT : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_LIMIT_MAX)
        throw new UsageError(`--limit must be a whole number from 1 to ${PAGE_LIMIT_MAX}`);
      const page = await withStore((store) =>
        store.webhooks.listMessages(id, { status: status as (typeof MESSAGE_STATUSES)[number] | undefined, limit }),
      );
      if (page === undefined) throw new Error(`no webhook endpoint with id "${id}"`);
      const messages = page.map(deliveryView);
      if (values.json) return printJson(messages);
      printTable(
        ['ID', 'TYPE', 'STATUS', 'ATTEMPTS', 'LAST ATTEMPT', 'LAST STATUS', 'NEXT ATTEMPT', 'LAST ERROR'],
        messages.map((m) => [
          m.id,
          m.type,
          m.status,
          String(m.attempts),
          m.lastAttemptAt ?? '-',
          String(m.lastStatus ?? '-'),
          m.nextAttemptAt ?? '-',
          m.lastError ?? '',
        ]),
      );
      return;
    }
    default:
      throw new UsageError(`unknown webhook command "${action ?? ''}"`);
  }
}
