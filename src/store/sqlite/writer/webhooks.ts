import { prepare, type Connection } from '../connection.js';
import { DISABLED_AT_EVENT, failingTooLong } from '../../../model/delivery-reasons.js';
import type { WriteOf, WriteResults } from './protocol.js';
import type { DueMessage, WebhookEndpoint } from '../../webhook-store.js';
import type { RecordedEvent } from './feed.js';
import { outcomeOf } from '../../writes.js';

/**
 * The webhook writes of the SQLite writer thread: the outbox (messages queued in the transaction of the
 * plant changes they announce, with the id and body the change feed recorded) and the endpoints' and messages' updates. Runs in the writer thread only.
 */

interface EndpointRow {
  id: string;
  events: string;
  enabled: number;
}

interface ClaimedRow {
  seq: bigint;
  endpoint_id: string;
  event_id: string;
  payload: string;
  round_attempts: bigint;
  traceparent: string | null;
}

interface EndpointSecrets {
  id: string;
  url: string;
  int64_strings: number;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
}

type Ops = {
  [
    K in
      | 'createEndpoint'
      | 'updateEndpoint'
      | 'deleteEndpoint'
      | 'rotateSecret'
      | 'replay'
      | 'claimDue'
      | 'recordAttempts'
      | 'releaseClaims'
      | 'deleteExpired'
  ]: (op: WriteOf<K>) => WriteResults[K];
};

export function sqliteWebhookWrites(db: Connection): { queue(events: readonly RecordedEvent[], now: number): number; ops: Ops } {
  const endpoints = prepare<[], EndpointRow>(db, 'SELECT id, events, enabled FROM webhook_endpoints');
  const insertMessage = prepare<[string, string, string, string, number, string, number | null, string | null, string | null]>(
    db,
    `INSERT INTO webhook_messages (endpoint_id, event_id, type, payload, occurred_at, status, next_attempt_at, last_error, traceparent)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const endpointExists = prepare<[string]>(db, 'SELECT 1 FROM webhook_endpoints WHERE id = ?');
  // Every field an endpoint's read shows but its id and creation time, which never change: `IS` matches NULL too.
  const endpointAsShown = prepare<[string, string, string, string | null, number, number, string | null, number | null]>(
    db,
    `SELECT 1 FROM webhook_endpoints WHERE id = ? AND url = ? AND events = ? AND description IS ? AND int64_strings = ? AND enabled = ?
       AND disabled_reason IS ? AND previous_secret_until IS ?`,
  );
  /** Whether the endpoint is gone (false), as `expected` shows it (true), or changed since ('changed'). */
  const foundAsExpected = (id: string, expected: WebhookEndpoint | undefined): boolean | 'changed' => {
    if (!endpointExists.get(id)) return false;
    if (expected === undefined) return true;
    const { url, events, description, int64, enabled, disabledReason, previousSecretUntil } = expected;
    const same = endpointAsShown.get(
      id,
      url,
      events.join(' '),
      description ?? null,
      int64 === 'string' ? 1 : 0,
      enabled ? 1 : 0,
      disabledReason ?? null,
      previousSecretUntil ?? null,
    );
    return same === undefined ? 'changed' : true;
  };
  const claim = prepare<[number, number, number, number], ClaimedRow>(
    db,
    `UPDATE webhook_messages SET lease_until = ?
       WHERE seq IN (SELECT m.seq FROM webhook_messages m JOIN webhook_endpoints e ON e.id = m.endpoint_id
                     WHERE m.status = 'pending' AND m.next_attempt_at <= ? AND (m.lease_until IS NULL OR m.lease_until <= ?) AND e.enabled = 1
                     ORDER BY m.next_attempt_at, m.seq LIMIT ?)
       RETURNING seq, endpoint_id, event_id, payload, round_attempts, traceparent`,
  ).safeIntegers(true);
  const secrets = prepare<[string], EndpointSecrets>(
    db,
    'SELECT id, url, int64_strings, secret, previous_secret, previous_secret_until FROM webhook_endpoints WHERE id = ?',
  );
  // An attempt is recorded on its message by seq and endpoint: a seq is a rowid, which SQLite gives again
  // once the highest row is deleted (an endpoint deleted while its newest message was being sent), and the
  // attempt's outcome must not land on another endpoint's message that took the seq.
  const delivered = prepare<[number, number | null, bigint, string]>(
    db,
    `UPDATE webhook_messages SET status = 'delivered', attempts = attempts + 1, round_attempts = round_attempts + 1, last_attempt_at = ?,
       last_status = ?, last_error = NULL, next_attempt_at = NULL, lease_until = NULL WHERE seq = ? AND endpoint_id = ?`,
  );
  const failedAttempt = prepare<[string, number | null, number, number | null, string | null, bigint, string]>(
    db,
    `UPDATE webhook_messages SET status = ?, attempts = attempts + 1, round_attempts = round_attempts + 1, next_attempt_at = ?,
       last_attempt_at = ?, last_status = ?, last_error = ?, lease_until = NULL WHERE seq = ? AND endpoint_id = ?`,
  );
  // Only an endpoint that was failing is written: a write per delivery would be a page write per delivery.
  const succeeded = prepare<[string]>(db, 'UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL');
  const failing = prepare<[number, string]>(db, 'UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, ?) WHERE id = ?');
  const disableIfFailingSince = prepare<[string, string, number]>(
    db,
    'UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ? WHERE id = ? AND enabled = 1 AND failing_since <= ?',
  );
  const release = prepare<[bigint]>(db, "UPDATE webhook_messages SET lease_until = NULL WHERE seq = ? AND status = 'pending'");
  const disable = prepare<[string, string]>(db, 'UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ? WHERE id = ?');

  return {
    /** Queues one message per subscribed endpoint for each recorded event; the number queued for delivery now. */
    queue(events, now) {
      const subscribers = endpoints.all();
      if (subscribers.length === 0) return 0;
      let pending = 0;
      for (const event of events) {
        for (const endpoint of subscribers) {
          if (!endpoint.events.split(' ').includes(event.type)) continue;
          if (endpoint.enabled === 1) {
            insertMessage.run(endpoint.id, event.id, event.type, event.body, now, 'pending', now, null, event.traceparent);
            pending++;
          } else insertMessage.run(endpoint.id, event.id, event.type, event.body, now, 'failed', null, DISABLED_AT_EVENT, event.traceparent);
        }
      }
      return pending;
    },

    ops: {
      createEndpoint({ endpoint: e }) {
        prepare(
          db,
          `INSERT INTO webhook_endpoints (id, url, events, description, int64_strings, enabled, secret, created_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?)`,
        ).run(e.id, e.url, e.events.join(' '), e.description ?? null, e.int64 === 'string' ? 1 : 0, e.secret, e.createdAt);
        return e;
      },
      updateEndpoint({ id, changes, expected }) {
        const found = foundAsExpected(id, expected);
        if (found !== true) return found;
        if (changes.url !== undefined) prepare(db, 'UPDATE webhook_endpoints SET url = ? WHERE id = ?').run(changes.url, id);
        if (changes.events !== undefined) prepare(db, 'UPDATE webhook_endpoints SET events = ? WHERE id = ?').run(changes.events.join(' '), id);
        if (changes.description !== undefined) prepare(db, 'UPDATE webhook_endpoints SET description = ? WHERE id = ?').run(changes.description, id);
        if (changes.int64 !== undefined)
          prepare(db, 'UPDATE webhook_endpoints SET int64_strings = ? WHERE id = ?').run(changes.int64 === 'string' ? 1 : 0, id);
        if (changes.enabled === true) {
          prepare(db, 'UPDATE webhook_endpoints SET enabled = 1, disabled_reason = NULL, failing_since = NULL WHERE id = ?').run(id);
        } else if (changes.enabled === false) prepare(db, 'UPDATE webhook_endpoints SET enabled = 0, disabled_reason = NULL WHERE id = ?').run(id);
        return true;
      },
      deleteEndpoint({ id, expected }) {
        const found = foundAsExpected(id, expected);
        if (found !== true) return found;
        return prepare(db, 'DELETE FROM webhook_endpoints WHERE id = ?').run(id).changes === 1;
      },
      rotateSecret({ id, secret, previousUntil, expected }) {
        const found = foundAsExpected(id, expected);
        if (found !== true) return outcomeOf.rotateSecret(secret, found);
        const rotated = prepare(db, 'UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = ?, secret = ? WHERE id = ?').run(
          previousUntil,
          secret,
          id,
        );
        return outcomeOf.rotateSecret(secret, rotated.changes === 1);
      },
      replay({ endpointId, since, until, expected, now }) {
        const found = foundAsExpected(endpointId, expected);
        if (found !== true) return outcomeOf.replay(found === false ? null : found);
        const requeued = prepare(
          db,
          `UPDATE webhook_messages SET status = 'pending', round_attempts = 0, next_attempt_at = ?, lease_until = NULL
             WHERE endpoint_id = ? AND status = 'failed' AND occurred_at >= ? AND occurred_at <= ?`,
        ).run(now, endpointId, since, until ?? Number.MAX_SAFE_INTEGER).changes;
        return outcomeOf.replay(requeued);
      },
      claimDue({ limit, leaseMs, now }) {
        const rows = claim.all(now + leaseMs, now, now, limit);
        const byEndpoint = new Map<string, EndpointSecrets>();
        return rows.map((row): DueMessage => {
          let endpoint = byEndpoint.get(row.endpoint_id);
          if (!endpoint) byEndpoint.set(row.endpoint_id, (endpoint = secrets.get(row.endpoint_id)!));
          const keys = [endpoint.secret];
          if (endpoint.previous_secret !== null && (endpoint.previous_secret_until ?? 0) > now) keys.push(endpoint.previous_secret);
          return {
            seq: row.seq.toString(),
            endpointId: row.endpoint_id,
            url: endpoint.url,
            secrets: keys,
            eventId: row.event_id,
            payload: row.payload,
            ...(endpoint.int64_strings === 1 ? { int64: 'string' as const } : {}),
            roundAttempts: Number(row.round_attempts),
            ...(row.traceparent === null ? {} : { traceparent: row.traceparent }),
          };
        });
      },
      recordAttempts({ attempts, disableAfterMs }) {
        for (const a of attempts) {
          const seq = BigInt(a.seq);
          if (a.outcome === 'delivered') {
            delivered.run(a.at, a.status, seq, a.endpointId);
            succeeded.run(a.endpointId);
            continue;
          }
          failedAttempt.run(a.outcome === 'retry' ? 'pending' : 'failed', a.nextAttemptAt ?? null, a.at, a.status, a.error, seq, a.endpointId);
          if (a.disable !== undefined) disable.run(a.disable, a.endpointId);
          failing.run(a.at, a.endpointId);
          disableIfFailingSince.run(failingTooLong(disableAfterMs), a.endpointId, a.at - disableAfterMs);
        }
        return null;
      },
      releaseClaims({ seqs }) {
        for (const seq of seqs) release.run(BigInt(seq));
        return null;
      },
      deleteExpired({ before }) {
        return prepare(db, `DELETE FROM webhook_messages WHERE status <> 'pending' AND coalesce(last_attempt_at, occurred_at) < ?`).run(before)
          .changes;
      },
    },
  };
}
