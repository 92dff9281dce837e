import { failingTooLong } from '../../model/delivery-reasons.js';
import type { AttemptRecord } from '../webhook-store.js';

/**
 * Records a batch of delivery attempts in one statement, without a transaction of its own (one round
 * trip instead of BEGIN, statements and COMMIT): each message gets its attempt, and each endpoint whose
 * streak changed gets one row version.
 *
 * The endpoint's failure streak follows the attempts in the order given (the order they finished): a
 * delivery ends it, and it starts at the first failure after the endpoint's last delivery (or goes on
 * from the stored `failing_since` when the batch has no delivery of that endpoint). An endpoint failing
 * for `$9` ms by its latest failure is disabled; a 410 Gone (`disable`) disables it whatever came after.
 * An endpoint with only deliveries is written only when it was failing (a row version per batch of
 * deliveries would be a page write each, and make batches of one endpoint wait on each other).
 */
const RECORD_ATTEMPTS = `
WITH a AS (
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::int[], $6::text[], $7::text[], $8::text[])
    WITH ORDINALITY AS a (seq, status, next_at, at, http_status, error, endpoint_id, disable, ord)),
messages AS (
  UPDATE webhook_messages w SET status = a.status, attempts = w.attempts + 1, round_attempts = w.round_attempts + 1,
    next_attempt_at = a.next_at, last_attempt_at = a.at, last_status = a.http_status, last_error = a.error, lease_until = NULL
  -- By seq and endpoint, as on SQLite (whose seqs may be given again): an attempt lands on its own message only.
  FROM a WHERE w.seq = a.seq AND w.endpoint_id = a.endpoint_id),
last_delivered AS (
  SELECT endpoint_id, max(ord) AS ord FROM a WHERE status = 'delivered' GROUP BY endpoint_id),
streak AS (
  SELECT a.endpoint_id, bool_or(l.ord IS NOT NULL) AS restarted, min(a.at) AS first_failure, max(a.at) AS last_failure
  FROM a LEFT JOIN last_delivered l USING (endpoint_id)
  WHERE a.status <> 'delivered' AND a.ord > coalesce(l.ord, 0)
  GROUP BY a.endpoint_id),
gone AS (
  SELECT DISTINCT ON (endpoint_id) endpoint_id, disable FROM a WHERE disable IS NOT NULL ORDER BY endpoint_id, ord DESC),
changed AS (
  SELECT e.id, s.last_failure, g.disable,
         CASE WHEN s.endpoint_id IS NULL THEN NULL
              WHEN s.restarted THEN s.first_failure
              ELSE coalesce(e.failing_since, s.first_failure) END AS failing_since
  FROM (SELECT DISTINCT endpoint_id FROM a) t
  JOIN webhook_endpoints e ON e.id = t.endpoint_id
  LEFT JOIN streak s ON s.endpoint_id = t.endpoint_id
  LEFT JOIN gone g ON g.endpoint_id = t.endpoint_id
  WHERE s.endpoint_id IS NOT NULL OR g.disable IS NOT NULL OR e.failing_since IS NOT NULL)
UPDATE webhook_endpoints e SET
  failing_since = c.failing_since,
  enabled = CASE WHEN c.disable IS NOT NULL OR c.failing_since <= c.last_failure - $9::bigint THEN false ELSE e.enabled END,
  disabled_reason = CASE WHEN c.disable IS NOT NULL THEN c.disable
                         WHEN e.enabled AND c.failing_since <= c.last_failure - $9::bigint THEN $10
                         ELSE e.disabled_reason END
FROM changed c WHERE e.id = c.id`;

/** The statement and its parameters for recording `attempts` (see RECORD_ATTEMPTS). */
export function recordAttemptsStatement(attempts: readonly AttemptRecord[], disableAfterMs: number): [string, unknown[]] {
  return [
    RECORD_ATTEMPTS,
    [
      attempts.map((a) => a.seq),
      attempts.map((a) => (a.outcome === 'retry' ? 'pending' : a.outcome)),
      attempts.map((a) => a.nextAttemptAt ?? null),
      attempts.map((a) => a.at),
      attempts.map((a) => a.status),
      attempts.map((a) => a.error),
      attempts.map((a) => a.endpointId),
      attempts.map((a) => a.disable ?? null),
      disableAfterMs,
      failingTooLong(disableAfterMs),
    ],
  ];
}
