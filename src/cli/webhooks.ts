import { EVENT_TYPES, type EventType } from '../model/events.js';
import type { Int64Form, MessageStatus } from '../store/webhook-store.js';
import { INT64_FORMS, MESSAGE_STATUSES, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from '../webhooks/schema.js';
import { orList } from '../words.js';
import { apiTarget, URL_OPTION } from './api-target.js';
import { UsageError, type Command } from './command.js';
import * as http from './webhooks-http.js';
import * as local from './webhooks-store.js';

/**
 * `plant-store webhook add|list|remove|deliveries`: the same rules as the /webhooks routes, on the store
 * DATABASE_URL names (an operator on the server's machine), or through a running service's API with --url
 * or PLANT_STORE_URL (from anywhere, with a token that has webhooks:manage).
 */

const MANAGES = 'with webhooks:manage';

function events(names: string[] | undefined): EventType[] | undefined {
  if (names === undefined) return undefined;
  for (const name of names) {
    if (!(EVENT_TYPES as readonly string[]).includes(name)) throw new UsageError(`unknown event "${name}": the events are ${EVENT_TYPES.join(', ')}`);
  }
  return [...new Set(names)] as EventType[];
}

export const webhookCommand: Command = {
  name: 'webhook',
  summary:
    'Webhook endpoints: where the server announces plant changes, signed and retried; and their deliveries log. On the store, or through a service with --url.',
  usesStore: true,
  actions: {
    add: {
      summary: 'register an endpoint; prints it as JSON, secret included',
      details: 'Public addresses only, unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true where the URL is checked: here, or by the service with --url.',
      args: [{ name: 'URL', required: true, help: 'where deliveries are POSTed: an absolute http(s) URL' }],
      options: {
        event: { type: 'string', value: 'EVENT', multiple: true, help: `${orList(EVENT_TYPES)} (default: all of them)` },
        description: { type: 'string', value: 'TEXT', help: 'free text for people' },
        int64: {
          type: 'string',
          value: 'FORM',
          choices: INT64_FORMS,
          help: 'how its bodies write plant ids: number (the default) or string, exact in JavaScript',
        },
        url: URL_OPTION,
      },
      async run(given) {
        const input = {
          url: given.args[0]!,
          events: events(given.strings('event')),
          description: given.string('description'),
          int64: given.string('int64') as Int64Form | undefined,
        };
        const target = apiTarget(given, MANAGES);
        return target ? http.add(target, input) : local.add(input);
      },
    },
    list: {
      summary: 'list endpoints (never their secrets)',
      options: { json: { type: 'boolean', help: 'as JSON, one object per endpoint' }, url: URL_OPTION },
      async run(given) {
        const target = apiTarget(given, MANAGES);
        return target ? http.list(target, given.flag('json')) : local.list(given.flag('json'));
      },
    },
    remove: {
      summary: 'delete an endpoint and its messages',
      args: [{ name: 'ID', required: true, help: 'the id of the endpoint (webhook list shows it)' }],
      options: { url: URL_OPTION },
      async run(given) {
        const id = given.args[0]!;
        const target = apiTarget(given, MANAGES);
        return target ? http.remove(target, id) : local.remove(id);
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
        url: URL_OPTION,
      },
      async run(given) {
        const id = given.args[0]!;
        const status = given.string('status') as MessageStatus | undefined;
        const text = given.string('limit');
        const limit = text === undefined ? PAGE_LIMIT_DEFAULT : /^\d+$/.test(text) ? Number(text) : NaN;
        if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_LIMIT_MAX) {
          throw new UsageError(`--limit must be a whole number from 1 to ${PAGE_LIMIT_MAX}, got "${text}"`);
        }
        const target = apiTarget(given, MANAGES);
        return target ? http.deliveries(target, id, status, limit, given.flag('json')) : local.deliveries(id, status, limit, given.flag('json'));
      },
    },
  },
};
