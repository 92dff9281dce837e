import type { Query } from './query.js';
import type { RateCounter } from '../store.js';

/**
 * Rate-limit counts in a PostgreSQL table, so that every instance on one database counts against the
 * same limit. One statement per request settles concurrent increments atomically.
 */
export class PostgresRateCounter implements RateCounter {
  private swept = -1;

  constructor(private readonly query: Query) {}

  async hit(key: string, window: number): Promise<number> {
    this.sweep(window);
    const { rows } = await this.query<{ count: number }>(
      `INSERT INTO rate_limits (key, window_start, count) VALUES ($1, $2, 1)
       ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limits.count + 1 RETURNING count`,
      [key, window],
    );
    return rows[0]?.count ?? 1;
  }

  /** Past windows are deleted once per window by each instance; a failure only leaves rows for the next sweep. */
  private sweep(window: number): void {
    if (window === this.swept) return;
    this.swept = window;
    this.query('DELETE FROM rate_limits WHERE window_start < $1', [window]).catch(() => undefined);
  }
}
