import { afterKey, orderBy, ORDERS, PLANT_JSON, tagsIn, type ListShape } from './list-sql.js';

/**
 * q in a name order on SQLite: the order's index walked a little (searchWalk, src/store/search-walk.ts),
 * then the trigram index's matches sorted, or the order's index walked on when q is common.
 */

/**
 * In a name order, q is found through the trigram index, whose matches are then sorted, unless so many
 * names hold it (this many or more, counted through the index up to this many) that sorting them would
 * cost more than a search should: then walking the order's index checking name_fold finds a page. Sorting
 * m matches costs about 1 µs each, whatever q (30,000: about 30 ms), and is done once. Walking costs about
 * 0.8 µs for each name walked past, and how many that is depends on where the matches stand in name order,
 * not on how many there are: names that start alike stand together, so a q held by every "Golden …" name
 * (1 in 31) was walked past 51,000 names before them at 200k plants (42 ms; 5 ms sorted), and a "Red …"
 * one past the whole SCAN_WINDOW, answering an empty first page. A q held by 30,000 names or more is held
 * by one name in a few at most stores' sizes, so the walk finds a page soon (figures in bench/RESULTS.md).
 */
export const COMMON_Q = 30_000;

/**
 * In a name order: how many names hold q, checked, at most @cap, found through the trigram index, and
 * their ids as a JSON array (made by SQLite: exact over the whole int64 range, no BigInt on the way).
 * COMMON_Q or more: q is common, and the page is found by walking the order's index. Fewer, with the index
 * holding every plant: they are every match, and the page is made from them (pageOfMatchesSql), in one
 * pass over the index's candidates where counting the matches and then sorting them read each twice (a q
 * whose trigrams many names hold but few hold whole, as crafted names are: 26 + 33 ms for 20,000 of them).
 * While the index is behind, the page merges its matches with the plants written since (pageSql); those
 * few are left out of the count, which then only chooses a plan, never an answer.
 */
export const MATCH_IDS_SQL = `SELECT count(*) AS count, json_group_array(id) AS ids FROM (SELECT p.id FROM plants_search s
  CROSS JOIN plants p ON p.id = s.rowid WHERE plants_search MATCH @match AND instr(p.name_fold, @fold) > 0 LIMIT @cap)`;

/**
 * How many names the trigram index gives for q's terms, at most @cap, read from the index alone (where
 * MATCH_IDS_SQL reads each plant too, many times the cost: measured in bench/RESULTS.md): every name that
 * holds q is among them, so fewer than COMMON_Q of them means fewer matches, and the page is the matches
 * sorted, found in one pass (pageSql), without the count and the ids MATCH_IDS_SQL gathers, which read each
 * match twice. Only where they are COMMON_Q or more are the matches themselves counted, so that the choice
 * is always the one they make.
 */
export const CANDIDATES_SQL = 'SELECT count(*) FROM (SELECT 1 FROM plants_search WHERE plants_search MATCH @match LIMIT @cap)';

/**
 * A page in a name order made from the matches MATCH_IDS_SQL found (@ids, a JSON array of ids), with the
 * tags and the start key applied, each checked against q again (a name changed since it was found is
 * left out, as if read before the change).
 */
export function pageOfMatchesSql(shape: Pick<ListShape, 'sort' | 'after' | 'tags'>): string {
  const conditions = [
    'instr(p.name_fold, @fold) > 0',
    ...(shape.tags > 0 ? [tagsIn(shape.tags)] : []),
    ...(shape.after ? [afterKey(shape.sort, 'p.id')] : []),
  ];
  return `SELECT ${PLANT_JSON}, p.id, p.name FROM json_each(@ids) j CROSS JOIN plants p ON p.id = j.value
    WHERE ${conditions.join(' AND ')} ORDER BY ${orderBy(shape.sort)} LIMIT @take`;
}

/** Whether a request finds q through the trigram index in a name order (where COMMON_Q may send it along the order's index instead). */
export function sortsMatches(shape: ListShape): boolean {
  return (shape.q === 'index' || shape.q === 'recent') && ORDERS[shape.sort].columns.length > 1;
}
