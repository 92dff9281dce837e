import { prepare, type Connection } from '../connection.js';

/**
 * The search index (plants_search, the folded names' trigrams) in the writer thread. It is derived data,
 * kept out of the writes' transactions: after them, in batches, the plants that the change feed names
 * after the index's mark (counters.search_position) are indexed as they now stand, and the mark moves to
 * the last event read, in the same transaction, so that a crash loses no indexing it recorded and
 * repeats what it did not. Searches read the plants after the mark besides the index (list-sql.ts).
 */

/** Events indexed in one transaction at most: many share its cost, and writes waiting behind it wait little. */
const CHUNK = 5000;

export interface SearchIndexer {
  /** Indexes the plants of the next events after the mark (`chunk` at most), in the caller's transaction; answers how many events remain. */
  step(chunk?: number): number;
  /** Events not indexed yet. */
  behind(): number;
  /** Empties the index and indexes every plant, in the caller's transaction; answers how many it holds. */
  rebuild(): number;
}

export function sqliteSearchIndexer(db: Connection): SearchIndexer {
  const mark = prepare<[], number>(db, "SELECT value FROM counters WHERE name = 'search_position'").pluck();
  const setMark = prepare<[number]>(db, "UPDATE counters SET value = ? WHERE name = 'search_position'");
  const last = prepare<[], number>(db, 'SELECT coalesce(max(position), 0) FROM events').pluck();
  const first = prepare<[], number | null>(db, 'SELECT min(position) FROM events').pluck();
  const chunkEnd = prepare<[number, number], number | null>(
    db,
    'SELECT max(position) FROM (SELECT position FROM events WHERE position > ? ORDER BY position LIMIT ?)',
  ).pluck();
  // The plants the events (after, upto] name: the body's data.id is the plant's id (model/events.ts), exact
  // as an int64. Their index entries are taken out, then put back from the plants as they now stand (a
  // deleted plant has none). Set-based, two statements a step, whatever its size.
  const CHANGED = `SELECT json_extract(body, '$.data.id') FROM events WHERE position > @after AND position <= @upto`;
  const unindex = prepare<[{ after: number; upto: number }]>(db, `DELETE FROM plants_search WHERE rowid IN (${CHANGED})`);
  const index = prepare<[{ after: number; upto: number }]>(
    db,
    `INSERT INTO plants_search (rowid, name_fold) SELECT id, name_fold FROM plants WHERE id IN (${CHANGED})`,
  );
  const removeAll = prepare(db, "INSERT INTO plants_search (plants_search) VALUES ('delete-all')");
  const indexAll = prepare(db, 'INSERT INTO plants_search (rowid, name_fold) SELECT id, name_fold FROM plants');
  // Merges the index's segments into one: after a rebuild, the lists a search reads are whole.
  const optimize = prepare(db, "INSERT INTO plants_search (plants_search) VALUES ('optimize')");

  const rebuild = (): number => {
    removeAll.run();
    const count = indexAll.run().changes;
    optimize.run();
    setMark.run(last.get()!);
    return count;
  };

  return {
    step(chunk = CHUNK) {
      const from = mark.get()!;
      const oldest = first.get();
      // Events after the mark were deleted (never by the retention sweep, which keeps them): the feed no
      // longer says which plants changed, so the index is made anew from the plants.
      if (oldest !== null && oldest !== undefined && oldest > from + 1) {
        rebuild();
        return 0;
      }
      const upto = chunkEnd.get(from, chunk);
      if (upto === null || upto === undefined) return 0;
      unindex.run({ after: from, upto });
      index.run({ after: from, upto });
      setMark.run(upto);
      return last.get()! - upto;
    },
    behind() {
      return last.get()! - mark.get()!;
    },
    rebuild,
  };
}
