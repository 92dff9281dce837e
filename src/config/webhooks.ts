import { Type } from '@sinclair/typebox';
import { int, type Setting } from './setting.js';

/** Webhook deliveries: time-outs, retries, retention, concurrency and the SSRF guard's one exception. */

/** The longest wait before a retry, in seconds: the schedule's, and a receiver's Retry-After (30 days). */
export const RETRY_WAIT_MAX_SECONDS = 30 * 86_400;

export const WEBHOOK_SETTINGS = {
  webhookTimeoutMs: {
    env: 'WEBHOOK_TIMEOUT_MS',
    schema: int(100, 600_000, 15_000, 'A webhook delivery succeeds on a 2xx answer within this; otherwise it is retried'),
  },
  webhookRetrySchedule: {
    env: 'WEBHOOK_RETRY_SCHEDULE',
    schema: Type.Array(Type.Number({ minimum: 0, maximum: RETRY_WAIT_MAX_SECONDS }), {
      minItems: 1,
      maxItems: 100,
      itemName: 'wait',
      default: [5, 300, 1800, 7200, 18_000, 36_000, 36_000],
      description:
        'Seconds to wait before each retry of a failed webhook delivery, comma-separated (`5,300`: three attempts in all); each wait is lengthened by up to 10% at random',
    }),
    docDefault: '`5,300,1800,7200,18000,36000,36000` (about three days)',
  },
  webhookDisableAfterHours: {
    env: 'WEBHOOK_DISABLE_AFTER_HOURS',
    schema: Type.Number({
      exclusiveMinimum: 0,
      maximum: 100_000,
      default: 120,
      description: 'An endpoint whose deliveries kept failing, with no success, for this many hours is disabled',
    }),
  },
  webhookRetentionDays: {
    env: 'WEBHOOK_RETENTION_DAYS',
    schema: Type.Number({
      exclusiveMinimum: 0,
      maximum: 100_000,
      default: 30,
      description: 'Delivered and failed webhook messages are deleted after this many days',
    }),
  },
  webhookDnsTimeoutMs: {
    env: 'WEBHOOK_DNS_TIMEOUT_MS',
    schema: int(
      100,
      60_000,
      5_000,
      "How long registering a webhook URL (POST /webhooks, PATCH with a url) waits for its host's DNS lookup; past it the answer is 503 with Retry-After",
    ),
  },
  webhookConcurrency: { env: 'WEBHOOK_CONCURRENCY', schema: int(1, 10_000, 32, 'Webhook deliveries in flight per process at most') },
  webhookAllowPrivateNetworks: {
    env: 'WEBHOOK_ALLOW_PRIVATE_NETWORKS',
    schema: Type.Boolean({
      default: false,
      description:
        '`true` lets webhook URLs reach loopback, private and link-local addresses (development and tests only: it opens server-side request forgery)',
    }),
  },
} satisfies Record<string, Setting>;
