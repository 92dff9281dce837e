import { recordAttemptsStatement } from './attempts.js';
import { toEndpoint, toMessage, type EndpointRow, type MessageRow } from '../rows.js';
import type { Query } from './query.js';
import type {
  AttemptRecord,
  DueMessage,
  EndpointChanges,
  MessagePage,
  NewEndpointRecord,
  WebhookEndpoint,
  WebhookMessage,
  WebhookStore,
} from '../webhook-store.js';

/** The database's clock in epoch ms: leases must mean the same to every instance, whatever their clocks. */
const NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

// Epoch milliseconds are bigint columns: read as float8, exact below 2^53, so that they arrive as numbers.
const ENDPOINT_FIELDS =
  'id, url, events, description, int64_strings, enabled, disabled_reason, previous_secret_until::float8 AS previous_secret_until, created_at::float8 AS created_at';
const ENDPOINT_COLUMNS = `SELECT ${ENDPOINT_FIELDS} FROM webhook_endpoints`;

/**
 * A write's condition that the endpoint is as a client read it (If-Match), from parameter `$n` on
 * (expectedValues): every field its read shows but its id and creation time, which never change. The
 * first parameter false (no expectation) makes it true. Judged by the write's own statement, so that no
 * other write can come between.
 */
const AS_EXPECTED = (n: number): string =>
  `(NOT $${n}::boolean OR (url = $${n + 1} AND events = $${n + 2}::text[] AND description IS NOT DISTINCT FROM $${n + 3}
    AND int64_strings = $${n + 4} AND enabled = $${n + 5} AND disabled_reason IS NOT DISTINCT FROM $${n + 6}
    AND previous_secret_until IS NOT DISTINCT FROM $${n + 7}::bigint))`;

function expectedValues(expected: WebhookEndpoint | undefined): unknown[] {
  if (expected === undefined) return [false, null, null, null, null, null, null, null];
  const { url, events, description, int64, enabled, disabledReason, previousSecretUntil } = expected;
  return [true, url, events, description ?? null, int64 === 'string', enabled, disabledReason ?? null, previousSecretUntil ?? null];
}
const MESSAGE_COLUMNS = `SELECT event_id, type, payload, status, attempts, occurred_at::float8 AS occurred_at, last_attempt_at::float8 AS last_attempt_at,
  last_status, last_error, next_attempt_at::float8 AS next_attempt_at FROM webhook_messages`;

/**
 * Webhook endpoints and the outbox on PostgreSQL, shared by every instance: a due message is claimed
 * with FOR UPDATE SKIP LOCKED and a lease, so one instance at a time sends it, and a message whose
 * instance died is claimed again once its lease has passed.
 */
export class PostgresWebhooks implements WebhookStore {
  private readonly listeners: Array<() => void> = [];

  constructor(private readonly query: Query) {}

  /** Told by the plant writes of this process how many messages they queued. */
  readonly queued = (count: number): void => {
    if (count > 0) for (const listener of this.listeners) listener();
  };

  onQueued(listener: () => void): void {
    this.listeners.push(listener);
  }

  async createEndpoint(e: NewEndpointRecord): Promise<WebhookEndpoint> {
    const { rows } = await this.query<EndpointRow>(
      `INSERT INTO webhook_endpoints (id, url, events, description, int64_strings, enabled, secret, created_at) VALUES ($1, $2, $3, $4, $5, true, $6, $7)
       RETURNING ${ENDPOINT_FIELDS}`,
      [e.id, e.url, e.events, e.description ?? null, e.int64 === 'string', e.secret, e.createdAt],
    );
    return toEndpoint(rows[0]!);
  }

  async getEndpoint(id: string): Promise<WebhookEndpoint | undefined> {
    const { rows } = await this.query<EndpointRow>(`${ENDPOINT_COLUMNS} WHERE id = $1`, [id]);
    return rows[0] && toEndpoint(rows[0]);
  }

  async listEndpoints({ limit, after }: { limit: number; after?: string | undefined }): Promise<WebhookEndpoint[]> {
    // COLLATE "C": byte order, as SQLite sorts text, whatever the database's locale.
    const { rows } =
      after === undefined
        ? await this.query<EndpointRow>(`${ENDPOINT_COLUMNS} ORDER BY id COLLATE "C" LIMIT $1`, [limit])
        : await this.query<EndpointRow>(`${ENDPOINT_COLUMNS} WHERE id > $1 COLLATE "C" ORDER BY id COLLATE "C" LIMIT $2`, [after, limit]);
    return rows.map(toEndpoint);
  }

  updateEndpoint(id: string, changes: EndpointChanges): Promise<WebhookEndpoint | undefined>;
  updateEndpoint(id: string, changes: EndpointChanges, expected: WebhookEndpoint | undefined): Promise<WebhookEndpoint | undefined | 'changed'>;
  async updateEndpoint(id: string, changes: EndpointChanges, expected?: WebhookEndpoint): Promise<WebhookEndpoint | undefined | 'changed'> {
    const { rows } = await this.query<EndpointRow>(
      `UPDATE webhook_endpoints SET
         url = coalesce($2, url),
         events = coalesce($3, events),
         description = CASE WHEN $4::boolean THEN $5 ELSE description END,
         enabled = coalesce($6, enabled),
         disabled_reason = CASE WHEN $6 IS NULL THEN disabled_reason ELSE NULL END,
         failing_since = CASE WHEN $6 THEN NULL ELSE failing_since END,
         int64_strings = coalesce($7, int64_strings)
       WHERE id = $1 AND ${AS_EXPECTED(8)} RETURNING ${ENDPOINT_FIELDS}`,
      [
        id,
        changes.url ?? null,
        changes.events ?? null,
        changes.description !== undefined,
        changes.description ?? null,
        changes.enabled ?? null,
        changes.int64 === undefined ? null : changes.int64 === 'string',
        ...expectedValues(expected),
      ],
    );
    if (rows[0]) return toEndpoint(rows[0]);
    return expected !== undefined && (await this.getEndpoint(id)) ? 'changed' : undefined;
  }

  deleteEndpoint(id: string): Promise<boolean>;
  deleteEndpoint(id: string, expected: WebhookEndpoint | undefined): Promise<boolean | 'changed'>;
  async deleteEndpoint(id: string, expected?: WebhookEndpoint): Promise<boolean | 'changed'> {
    const { rowCount } = await this.query(`DELETE FROM webhook_endpoints WHERE id = $1 AND ${AS_EXPECTED(2)}`, [id, ...expectedValues(expected)]);
    if (rowCount === 1) return true;
    return expected !== undefined && (await this.getEndpoint(id)) ? 'changed' : false;
  }

  rotateSecret(id: string, secret: string, previousUntil: number): Promise<boolean>;
  rotateSecret(id: string, secret: string, previousUntil: number, expected: WebhookEndpoint | undefined): Promise<boolean | 'changed'>;
  async rotateSecret(id: string, secret: string, previousUntil: number, expected?: WebhookEndpoint): Promise<boolean | 'changed'> {
    const { rowCount } = await this.query(
      `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = $2, secret = $3 WHERE id = $1 AND ${AS_EXPECTED(4)}`,
      [id, previousUntil, secret, ...expectedValues(expected)],
    );
    if (rowCount === 1) return true;
    return expected !== undefined && (await this.getEndpoint(id)) ? 'changed' : false;
  }

  async listMessages(endpointId: string, { status, limit, after }: MessagePage): Promise<WebhookMessage[] | undefined> {
    if (!(await this.getEndpoint(endpointId))) return undefined;
    // '~' sorts after every webhook-id (byte order: event_id is COLLATE "C"): no cursor means from the newest.
    const { rows } = await this.query<MessageRow>(
      `${MESSAGE_COLUMNS} WHERE endpoint_id = $1 AND event_id < $2 AND ($3::text IS NULL OR status = $3)
       ORDER BY event_id DESC LIMIT $4`,
      [endpointId, after ?? '~', status ?? null, limit],
    );
    return rows.map(toMessage);
  }

  replay(endpointId: string, since: number, until: number | undefined): Promise<number | undefined>;
  replay(
    endpointId: string,
    since: number,
    until: number | undefined,
    expected: WebhookEndpoint | undefined,
  ): Promise<number | undefined | 'changed'>;
  async replay(endpointId: string, since: number, until: number | undefined, expected?: WebhookEndpoint): Promise<number | undefined | 'changed'> {
    // The endpoint as expected, held (FOR SHARE) until the statement's transaction ends: a change of it
    // waits for the replay, or the replay for the change, whose result it then judges.
    const { rows } = await this.query<{ found: boolean; matched: boolean; requeued: number }>(
      `WITH e AS (SELECT id FROM webhook_endpoints WHERE id = $1 AND ${AS_EXPECTED(4)} FOR SHARE),
            r AS (UPDATE webhook_messages SET status = 'pending', round_attempts = 0, next_attempt_at = ${NOW_MS}, lease_until = NULL
                  WHERE endpoint_id = (SELECT id FROM e) AND status = 'failed' AND occurred_at >= $2 AND occurred_at <= $3 RETURNING 1)
       SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = $1) AS found, EXISTS (SELECT 1 FROM e) AS matched,
              (SELECT count(*) FROM r)::int AS requeued`,
      [endpointId, since, until ?? Number.MAX_SAFE_INTEGER, ...expectedValues(expected)],
    );
    const { found, matched, requeued } = rows[0]!;
    if (matched) return requeued;
    return found && expected !== undefined ? 'changed' : undefined;
  }

  async claimDue(limit: number, leaseMs: number): Promise<DueMessage[]> {
    const { rows } = await this.query<{
      seq: string;
      endpoint_id: string;
      url: string;
      secret: string;
      previous_secret: string | null;
      event_id: string;
      payload: string;
      int64_strings: boolean;
      round_attempts: number;
      traceparent: string | null;
    }>(
      `WITH due AS (
         SELECT m.seq FROM webhook_messages m JOIN webhook_endpoints e ON e.id = m.endpoint_id
         WHERE m.status = 'pending' AND m.next_attempt_at <= ${NOW_MS} AND (m.lease_until IS NULL OR m.lease_until <= ${NOW_MS}) AND e.enabled
         ORDER BY m.next_attempt_at, m.seq LIMIT $1
         FOR UPDATE OF m SKIP LOCKED)
       UPDATE webhook_messages m SET lease_until = ${NOW_MS} + $2
       FROM due, webhook_endpoints e
       WHERE m.seq = due.seq AND e.id = m.endpoint_id
       RETURNING m.seq::text AS seq, m.endpoint_id, e.url, e.secret,
                 CASE WHEN e.previous_secret_until > ${NOW_MS} THEN e.previous_secret END AS previous_secret,
                 m.event_id, m.payload, e.int64_strings, m.round_attempts, m.traceparent`,
      [limit, leaseMs],
    );
    return rows.map((row) => ({
      seq: row.seq,
      endpointId: row.endpoint_id,
      url: row.url,
      secrets: row.previous_secret === null ? [row.secret] : [row.secret, row.previous_secret],
      eventId: row.event_id,
      payload: row.payload,
      ...(row.int64_strings ? { int64: 'string' as const } : {}),
      roundAttempts: row.round_attempts,
      ...(row.traceparent === null ? {} : { traceparent: row.traceparent }),
    }));
  }

  async recordAttempts(attempts: AttemptRecord[], disableAfterMs: number): Promise<void> {
    if (attempts.length === 0) return;
    await this.query(...recordAttemptsStatement(attempts, disableAfterMs));
  }

  async releaseClaims(seqs: readonly string[]): Promise<void> {
    if (seqs.length === 0) return;
    await this.query(`UPDATE webhook_messages SET lease_until = NULL WHERE seq = ANY ($1::bigint[]) AND status = 'pending'`, [seqs]);
  }

  async countPending(): Promise<number> {
    // Counted on the partial index of pending messages (webhook_messages_due), not the whole outbox.
    const { rows } = await this.query<{ n: string }>(`SELECT count(*)::text AS n FROM webhook_messages WHERE status = 'pending'`, []);
    return Number(rows[0]!.n);
  }

  async deleteExpired(before: number): Promise<number> {
    const { rowCount } = await this.query(`DELETE FROM webhook_messages WHERE status <> 'pending' AND coalesce(last_attempt_at, occurred_at) < $1`, [
      before,
    ]);
    return rowCount ?? 0;
  }
}
