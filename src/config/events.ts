import { Type } from '@sinclair/typebox';
import { int, type Setting } from './setting.js';

/** The change feed (GET /events): its streams' limits and rhythm, and how long events are kept. */

/** Half of a number of slots, at least one: no one token or address takes them all by default. */
const half = (slots: unknown) => Math.max(1, Math.floor(Number(slots) / 2));

export const EVENT_SETTINGS = {
  eventsMaxStreams: {
    env: 'EVENTS_MAX_STREAMS',
    schema: int(
      0,
      1_000_000,
      512,
      'Event streams (`GET /events` as text/event-stream) open at once per process at most; beyond: 503 with Retry-After. Each holds a connection: keep it well below `MAX_CONNECTIONS` (see [Security](security.md#event-streams-get-events-as-server-sent-events))',
    ),
    defaultFrom: (earlier: Readonly<Record<string, unknown>>) => Math.floor(Number(earlier.maxConnections) / 2),
    docDefault: 'half of `MAX_CONNECTIONS` (512)',
  },
  eventsMaxStreamsPerToken: {
    env: 'EVENTS_MAX_STREAMS_PER_TOKEN',
    schema: int(
      1,
      1_000_000,
      256,
      'Event streams one token (a JWT: one principal, its subject or its client) may hold open at once per process; beyond: 429 with Retry-After',
    ),
    defaultFrom: (earlier: Readonly<Record<string, unknown>>) => half(earlier.eventsMaxStreams),
    docDefault: 'half of `EVENTS_MAX_STREAMS` (256)',
  },
  eventsMaxStreamsPerAddress: {
    env: 'EVENTS_MAX_STREAMS_PER_ADDRESS',
    schema: int(
      1,
      1_000_000,
      256,
      'Event streams one client address (an IPv6 address by its /64; `TRUST_PROXY` decides which address) may hold open at once per process; beyond: 429 with Retry-After',
    ),
    defaultFrom: (earlier: Readonly<Record<string, unknown>>) => half(earlier.eventsMaxStreams),
    docDefault: 'half of `EVENTS_MAX_STREAMS` (256)',
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

/**
 * What an operator's own choice of the stream cap risks, said at start (the service still starts): each
 * stream holds a connection for good, so streams allowed near MAX_CONNECTIONS leave health checks and API
 * requests too few connections once they are all open.
 */
export function streamRoomWarnings(settings: { maxConnections: number; eventsMaxStreams: number }): string[] {
  const { maxConnections, eventsMaxStreams } = settings;
  const room = maxConnections - eventsMaxStreams;
  const most = Math.floor((maxConnections * 3) / 4);
  if (eventsMaxStreams <= most) return [];
  return [
    `EVENTS_MAX_STREAMS (${eventsMaxStreams}) leaves ${Math.max(0, room)} of MAX_CONNECTIONS (${maxConnections}) for other requests: ` +
      `with that many streams open, health checks and API requests may be refused; keep it at most ${most} (three quarters), or raise MAX_CONNECTIONS`,
  ];
}
