import { replayOf, type IdempotencyStore, type Kept, type KeyRow } from '../idempotency.js';
import { FIND, NOW_ONCE } from './keys.js';
import type { Query } from './query.js';

/**
 * The outcomes kept under Idempotency-Keys on PostgreSQL, shared by every instance: found, counted and
 * swept (the keyed writes are writes.ts's, their claims keys.ts's).
 */

// The longest expired first, found on the expiry index; rows locked by a claim taking an expired key over
// are left for the next sweep (SKIP LOCKED), so the sweep never waits for a write, nor a write long for it.
const SWEEP = `DELETE FROM idempotency_keys WHERE (owner, key) IN
    (SELECT owner, key FROM idempotency_keys WHERE expires_at <= ${NOW_ONCE} ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
  AND expires_at <= ${NOW_ONCE}`;

// On the expiry index (an index-only scan once vacuumed).
const COUNT = `SELECT count(*)::text AS n FROM idempotency_keys WHERE expires_at > ${NOW_ONCE}`;

export class PostgresIdempotency implements IdempotencyStore {
  constructor(private readonly query: Query) {}

  async find(owner: string, key: string): Promise<Kept | undefined> {
    const { rows } = await this.query<KeyRow>(FIND, [[owner], [key]]);
    return rows[0] && replayOf(rows[0]);
  }

  async deleteExpired(limit: number): Promise<number> {
    const { rowCount } = await this.query(SWEEP, [limit]);
    return rowCount ?? 0;
  }

  async count(): Promise<number> {
    const { rows } = await this.query<{ n: string }>(COUNT, []);
    return Number(rows[0]!.n);
  }
}
