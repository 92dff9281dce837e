import type { SearchIndex } from '../store.js';
import type { QueryBy } from './query.js';

/** A rebuild over millions of plants takes minutes: longer than any request may wait, as long as it needs. */
const REBUILD_MS = 3_600_000;

/**
 * The search index on PostgreSQL: pg_trgm's GIN index on name_fold, kept by PostgreSQL in the writes'
 * own transactions (its fastupdate pending list already defers the index's work), so it is never behind.
 */
export class PostgresSearchIndex implements SearchIndex {
  constructor(private readonly queryBy: QueryBy) {}

  lag(): Promise<{ events: number; ms: number }> {
    return Promise.resolve({ events: 0, ms: 0 });
  }

  /** Never told: the index is kept by the writes' own transactions, and fails with them. */
  onFailure(): void {}

  /** Rebuilds the index without blocking writes (REINDEX CONCURRENTLY), where pg_trgm made one. */
  async rebuild(): Promise<number> {
    const query = this.queryBy(Date.now() + REBUILD_MS);
    const { rows } = await query<{ exists: boolean }>("SELECT to_regclass('plants_name_fold_trgm') IS NOT NULL AS exists", []);
    if (rows[0]?.exists === true) await query('REINDEX INDEX CONCURRENTLY plants_name_fold_trgm', []);
    const count = await query<{ count: string }>('SELECT count(*) AS count FROM plants', []);
    return Number(count.rows[0]!.count);
  }
}
