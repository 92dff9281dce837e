import { prepare, type Connection } from './connection.js';
import type { EventType } from '../../model/events.js';
import type * as WebhookTypes from '../webhook-store.js';
import { toEndpoint, toMessage, type EndpointRow, type MessageRow } from '../rows.js';
import { guard } from './errors.js';
import type { WriteThread } from './writer/thread.js';

/** An endpoint as SQLite keeps it: events space-separated, int64_strings and enabled as 0 or 1. */
interface SqliteEndpointRow extends Omit<EndpointRow, 'events' | 'int64_strings' | 'enabled'> {
  events: string;
  int64_strings: number;
  enabled: number;
}

const ENDPOINT_COLUMNS =
  'SELECT id, url, events, description, int64_strings, enabled, disabled_reason, previous_secret_until, created_at FROM webhook_endpoints';
const MESSAGE_COLUMNS =
  'SELECT event_id, type, payload, status, attempts, occurred_at, last_attempt_at, last_status, last_error, next_attempt_at FROM webhook_messages';

function endpointOf(row: SqliteEndpointRow): WebhookTypes.WebhookEndpoint {
  return toEndpoint({ ...row, events: row.events.split(' ') as EventType[], int64_strings: row.int64_strings === 1, enabled: row.enabled === 1 });
}

/** Webhook endpoints and the outbox on SQLite: reads on the main thread's connection, writes through the writer thread. */
export class SqliteWebhooks implements WebhookTypes.WebhookStore {
  private readonly byId;
  private readonly firstEndpoints;
  private readonly nextEndpoints;
  private readonly pending;

  constructor(
    private readonly db: Connection,
    private readonly writer: WriteThread,
  ) {
    this.byId = prepare<[string], SqliteEndpointRow>(db, `${ENDPOINT_COLUMNS} WHERE id = ?`);
    this.firstEndpoints = prepare<[number], SqliteEndpointRow>(db, `${ENDPOINT_COLUMNS} ORDER BY id LIMIT ?`);
    this.nextEndpoints = prepare<[string, number], SqliteEndpointRow>(db, `${ENDPOINT_COLUMNS} WHERE id > ? ORDER BY id LIMIT ?`);
    // Counted on the partial index of pending messages (webhook_messages_due), not the whole outbox.
    this.pending = prepare<[], number>(db, "SELECT count(*) FROM webhook_messages WHERE status = 'pending'").pluck();
  }

  async createEndpoint(endpoint: WebhookTypes.NewEndpointRecord): Promise<WebhookTypes.WebhookEndpoint> {
    await this.writer.write({ kind: 'createEndpoint', endpoint });
    return (await this.getEndpoint(endpoint.id))!;
  }

  getEndpoint(id: string): Promise<WebhookTypes.WebhookEndpoint | undefined> {
    return guard(() => {
      const row = this.byId.get(id);
      return row && endpointOf(row);
    });
  }

  listEndpoints({ limit, after }: { limit: number; after?: string | undefined }): Promise<WebhookTypes.WebhookEndpoint[]> {
    return guard(() => (after === undefined ? this.firstEndpoints.all(limit) : this.nextEndpoints.all(after, limit)).map(endpointOf));
  }

  updateEndpoint(id: string, changes: WebhookTypes.EndpointChanges): Promise<WebhookTypes.WebhookEndpoint | undefined>;
  updateEndpoint(
    id: string,
    changes: WebhookTypes.EndpointChanges,
    expected: WebhookTypes.WebhookEndpoint | undefined,
  ): Promise<WebhookTypes.WebhookEndpoint | undefined | 'changed'>;
  async updateEndpoint(
    id: string,
    changes: WebhookTypes.EndpointChanges,
    expected?: WebhookTypes.WebhookEndpoint,
  ): Promise<WebhookTypes.WebhookEndpoint | undefined | 'changed'> {
    const found = await this.writer.write({ kind: 'updateEndpoint', id, changes, expected });
    if (found !== true) return found === false ? undefined : found;
    return this.getEndpoint(id);
  }

  deleteEndpoint(id: string): Promise<boolean>;
  deleteEndpoint(id: string, expected: WebhookTypes.WebhookEndpoint | undefined): Promise<boolean | 'changed'>;
  deleteEndpoint(id: string, expected?: WebhookTypes.WebhookEndpoint): Promise<boolean | 'changed'> {
    return this.writer.write({ kind: 'deleteEndpoint', id, expected });
  }

  rotateSecret(id: string, secret: string, previousUntil: number): Promise<boolean>;
  rotateSecret(id: string, secret: string, previousUntil: number, expected: WebhookTypes.WebhookEndpoint | undefined): Promise<boolean | 'changed'>;
  async rotateSecret(id: string, secret: string, previousUntil: number, expected?: WebhookTypes.WebhookEndpoint): Promise<boolean | 'changed'> {
    const rotated = await this.writer.write({ kind: 'rotateSecret', id, secret, previousUntil, expected });
    return rotated === 'changed' ? rotated : rotated !== 'not-found';
  }

  listMessages(endpointId: string, { status, limit, after }: WebhookTypes.MessagePage): Promise<WebhookTypes.WebhookMessage[] | undefined> {
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

  replay(endpointId: string, since: number, until: number | undefined): Promise<number | undefined>;
  replay(
    endpointId: string,
    since: number,
    until: number | undefined,
    expected: WebhookTypes.WebhookEndpoint | undefined,
  ): Promise<number | undefined | 'changed'>;
  async replay(
    endpointId: string,
    since: number,
    until: number | undefined,
    expected?: WebhookTypes.WebhookEndpoint,
  ): Promise<number | undefined | 'changed'> {
    const replayed = await this.writer.write({ kind: 'replay', endpointId, since, until, expected, now: Date.now() });
    return replayed === 'not-found' ? undefined : replayed === 'changed' ? replayed : replayed.requeued;
  }

  claimDue(limit: number, leaseMs: number): Promise<WebhookTypes.DueMessage[]> {
    return this.writer.write({ kind: 'claimDue', limit, leaseMs, now: Date.now() });
  }

  async recordAttempts(attempts: WebhookTypes.AttemptRecord[], disableAfterMs: number): Promise<void> {
    await this.writer.write({ kind: 'recordAttempts', attempts, disableAfterMs });
  }

  async releaseClaims(seqs: readonly string[]): Promise<void> {
    if (seqs.length > 0) await this.writer.write({ kind: 'releaseClaims', seqs });
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
