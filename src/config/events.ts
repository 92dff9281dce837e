import { Type } from '@sinclair/typebox';
import { int, type Setting } from './setting.js';

/** The change feed (GET /events): its streams' limits and rhythm, and how long events are kept. */

export const EVENT_SETTINGS = {
  eventsMaxStreams: {
    env: 'EVENTS_MAX_STREAMS',
    schema: int(
      0,
      1_000_000,
      1000,
      'Event streams (`GET /events` as text/event-stream) open at once per process at most; beyond: 503 with Retry-After',
    ),
  },
  eventsHeartbeatMs: {
    env: 'EVENTS_HEARTBEAT_MS',
    schema: int(1000, 3_600_000, 15_000, 'An event stream carries a comment line this often, so that proxies keep it open'),
  },
  eventsRetryMs: {
    env: 'EVENTS_RETRY_MS',
    schema: int(0, 3_600_000, 2000, "An event stream's `retry:` hint: how long a client waits before it reconnects"),
  },
  eventsPollMs: {
    env: 'EVENTS_POLL_MS',
    schema: int(
      20,
      60_000,
      250,
      'While streams are open, each process looks this often for events committed by others (other instances, the CLI); its own commits reach its streams at once',
    ),
  },
  eventsMaxBacklogBytes: {
    env: 'EVENTS_MAX_BACKLOG_BYTES',
    schema: int(
      16 * 1024,
      2 ** 30,
      1024 * 1024,
      'An event stream whose client has not taken this many bytes is disconnected (it resumes with Last-Event-ID), so a slow reader cannot grow memory',
    ),
  },
  eventsRetentionDays: {
    env: 'EVENTS_RETENTION_DAYS',
    schema: Type.Number({
      exclusiveMinimum: 0,
      maximum: 100_000,
      default: 30,
      description: 'Events are kept this many days (the newest always); resuming after an older one answers 410. Default: `WEBHOOK_RETENTION_DAYS`',
    }),
    defaultFrom: (earlier: Readonly<Record<string, unknown>>) => Number(earlier.webhookRetentionDays),
    docDefault: '`WEBHOOK_RETENTION_DAYS` (30)',
  },
} satisfies Record<string, Setting>;
