import { sqlitePath } from '../src/store/database-url.js';
import { openConnection, prepare } from '../src/store/sqlite/connection.js';

/**
 * How far the SQLite search index is behind the writes while a scenario runs: read from the service's
 * file every SAMPLE_MS on a read-only connection of its own (the age of the oldest change not indexed
 * yet), then how long after the load it takes to catch up. A build whose index is kept in the writes'
 * transactions has no mark: nothing to measure.
 */

const SAMPLE_MS = 20;
const DRAIN_LIMIT_MS = 30_000;

export interface SearchLag {
  /** Ages of the oldest unindexed change at each sample, ms: p99 and max. */
  p99Ms: number;
  maxMs: number;
  /** From the end of the load until the index held every change, ms. */
  drainMs: number;
}

export function sampleSearchLag(databaseUrl: string): { finish(): Promise<SearchLag | undefined> } | undefined {
  if (!databaseUrl.startsWith('file:')) return undefined;
  const db = openConnection(sqlitePath(databaseUrl), { readonly: true, fileMustExist: true });
  const lag = prepare<[], { events: number; oldest: number | null }>(
    db,
    `SELECT coalesce((SELECT max(position) FROM events), 0) - value AS events, (SELECT min(at) FROM events WHERE position > value) AS oldest
       FROM counters WHERE name = 'search_position'`,
  );
  const read = () => {
    try {
      return lag.get();
    } catch {
      return undefined; // busy for a moment, or a checkpoint: the next sample reads it
    }
  };
  const ages: number[] = [];
  let marked = true;
  const timer = setInterval(() => {
    const row = read();
    if (row === undefined) marked = marked && ages.length > 0;
    else ages.push(row.oldest === null ? 0 : Math.max(0, Date.now() - row.oldest));
  }, SAMPLE_MS);
  return {
    async finish() {
      clearInterval(timer);
      const ended = Date.now();
      try {
        if (!marked || ages.length === 0) return undefined;
        while ((read()?.events ?? 0) > 0 && Date.now() - ended < DRAIN_LIMIT_MS) await new Promise((resolve) => setTimeout(resolve, 5));
        const sorted = [...ages].sort((a, b) => a - b);
        return { p99Ms: sorted[Math.floor(sorted.length * 0.99)] ?? 0, maxMs: sorted.at(-1) ?? 0, drainMs: Date.now() - ended };
      } finally {
        db.close();
      }
    },
  };
}
