import { prepare, type Connection } from './connection.js';
import type { EventType } from '../../webhooks/events.js';
import type {
  AttemptRecord,
  DueMessage,
  EndpointChanges,
  MessagePage,
  MessageStatus,
  NewEndpointRecord,
  WebhookEndpoint,
  WebhookMessage,
  WebhookStore,
} from '../webhook-store.js';
import { guard } from './errors.js';
import type { WriteThread } from './writer/thread.js';

interface EndpointRow {
  id: string;
  url: string;
  events: string;
  description: string | null;
  enabled: number;
  disabled_reason: string | null;
  created_at: number;
}

interface MessageRow {
  event_id: string;
  type: string;
  status: string;
  attempts: number;
  occurred_at: number;
  last_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: number | null;
}

const ENDPOINT_COLUMNS = 'SELECT id, url, events, description, enabled, disabled_reason, created_at FROM webhook_endpoints';
const MESSAGE_COLUMNS =
  'SELECT event_id, type, status, attempts, occurred_at, last_attempt_at, last_status, last_error, next_attempt_at FROM webhook_messages';

function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    events: row.events.split(' ') as EventType[],
    ...(row.description === null ? {} : { description: row.description }),
    enabled: row.enabled === 1,
    ...(row.disabled_reason === null ? {} : { disabledReason: row.disabled_reason }),
    createdAt: row.created_at,
  };
}

function toMessage(row: MessageRow): WebhookMessage {
  return {
    id: row.event_id,
    type: row.type as EventType,
    status: row.status as MessageStatus,
    attempts: row.attempts,
    occurredAt: row.occurred_at,
    lastAttemptAt: row.last_attempt_at,
    lastStatus: row.last_status,
    lastError: row.last_error,
    nextAttemptAt: row.next_attempt_at,
  };
}

/** Webhook endpoints and the outbox on SQLite: reads on the main thread's connection, writes through the writer thread. */
export class SqliteWebhooks implements WebhookStore {
  private readonly byId;
  private readonly firstEndpoints;
  private readonly nextEndpoints;
  private readonly pending;

  constructor(
    private readonly db: Connection,
    private readonly writer: WriteThread,
  ) {
    this.byId = prepare<[string], EndpointRow>(db, `${ENDPOINT_COLUMNS} WHERE id = ?`);
    this.firstEndpoints = prepare<[number], EndpointRow>(db, `${ENDPOINT_COLUMNS} ORDER BY id LIMIT ?`);
    this.nextEndpoints = prepare<[string, number], EndpointRow>(db, `${ENDPOINT_COLUMNS} WHERE id > ? ORDER BY id LIMIT ?`);
    // Counted on the partial index of pending messages (webhook_messages_due), not the whole outbox.
    this.pending = prepare<[], number>(db, "SELECT count(*) FROM webhook_messages WHERE status = 'pending'").pluck();
  }

  async createEndpoint(endpoint: NewEndpointRecord): Promise<WebhookEndpoint> {
    await this.writer.write({ kind: 'createEndpoint', endpoint });
    return (await this.getEndpoint(endpoint.id))!;
  }

  getEndpoint(id: string): Promise<WebhookEndpoint | undefined> {
    return guard(() => {
      const row = this.byId.get(id);
      return row && toEndpoint(row);
    });
  }

  listEndpoints({ limit, after }: { limit: number; after?: string | undefined }): Promise<WebhookEndpoint[]> {
    return guard(() => (after === undefined ? this.firstEndpoints.all(limit) : this.nextEndpoints.all(after, limit)).map(toEndpoint));
  }

  async updateEndpoint(id: string, changes: EndpointChanges): Promise<WebhookEndpoint | undefined> {
    if (!(await this.writer.write({ kind: 'updateEndpoint', id, changes }))) return undefined;
    return this.getEndpoint(id);
  }

  deleteEndpoint(id: string): Promise<boolean> {
    return this.writer.write({ kind: 'deleteEndpoint', id });
  }

  rotateSecret(id: string, secret: string, previousUntil: number): Promise<boolean> {
    return this.writer.write({ kind: 'rotateSecret', id, secret, previousUntil });
  }

  listMessages(endpointId: string, { status, limit, after }: MessagePage): Promise<WebhookMessage[] | undefined> {
    return guard(() => {
      if (!this.byId.get(endpointId)) return undefined;
      // '~' sorts after every webhook-id: no cursor means from the newest.
      const before = after ?? '~';
      const rows =
        status === undefined
          ? prepare<[string, string, number], MessageRow>(
              this.db,
              `${MESSAGE_COLUMNS} WHERE endpoint_id = ? AND event_id < ? ORDER BY event_id DESC LIMIT ?`,
            ).all(endpointId, before, limit)
          : prepare<[string, string, string, number], MessageRow>(
              this.db,
              `${MESSAGE_COLUMNS} WHERE endpoint_id = ? AND event_id < ? AND status = ? ORDER BY event_id DESC LIMIT ?`,
            ).all(endpointId, before, status, limit);
      return rows.map(toMessage);
    });
  }

  async replay(endpointId: string, since: number, until: number | undefined): Promise<number | undefined> {
    const requeued = await this.writer.write({ kind: 'replay', endpointId, since, until, now: Date.now() });
    return requeued ?? undefined;
  }

  claimDue(limit: number, leaseMs: number): Promise<DueMessage[]> {
    return this.writer.write({ kind: 'claimDue', limit, leaseMs, now: Date.now() });
  }

  async recordAttempts(attempts: AttemptRecord[], disableAfterMs: number): Promise<void> {
    await this.writer.write({ kind: 'recordAttempts', attempts, disableAfterMs });
  }

  deleteExpired(before: number): Promise<number> {
    return this.writer.write({ kind: 'deleteExpired', before });
  }

  countPending(): Promise<number> {
    return guard(() => this.pending.get()!);
  }

  onQueued(listener: () => void): void {
    this.writer.onQueued(listener);
  }
}
