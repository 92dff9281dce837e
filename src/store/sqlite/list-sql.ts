import { foldCase } from '../../model/fold.js';
import type { ListOptions, PlantFilter, PlantSort } from '../store.js';
import { searchTerms } from './search-terms.js';

/**
 * The SQL of lists, counts and exports on SQLite, one statement per shape of request (prepared once and
 * kept, sqlite/connection.ts). Every order is served by an index, every page by keyset:
 * - id: the table itself (rowid); by tag: plants_tag_id (tag, id);
 * - name: plants_name_id (name, name_fold, then the rowid: the id); by tag: plants_tag_name_id (tag, name,
 *   name_fold); both hold name_fold, so that q in a name order can walk them without reading a plant;
 * - several tags: `tag IN (…)` on the same indexes, which SQLite reads tag by tag and stops each once
 *   the page is full (ORDER BY … LIMIT), so a page costs the same at any depth;
 * - q of 3 characters or more (folded): the trigram index plants_search gives the ids of the names
 *   holding a few of q's trigrams (searchTerms), in id order (sort=id reads only as far as the page; the
 *   name orders sort what matched), and every one is checked against the stored name_fold. The index is
 *   brought up to date after the writes (writer/search-index.ts): the plants the change feed names after
 *   its mark are read besides it and checked alike, so that an answer never lags the writes (UNINDEXED);
 *   shorter: a scan of name_fold, in the order's index, until the page is full.
 * EXPLAIN QUERY PLAN in test/store/sqlite/search.test.ts holds each shape to its index. How q in a name order
 * chooses between sorting its matches and walking the order is name-order-q.ts's.
 */

/**
 * A plants row (`plants p`) as JSON text: `{"id":…,"name":…}`, with `"tag":…` when it has one. SQLite's
 * JSON escaping is JSON.stringify's, byte for byte (the store contract tests check every UTF-16 code
 * unit), and ids are written as exact integers.
 */
export const PLANT_JSON = `CASE WHEN p.tag IS NULL THEN json_object('id', p.id, 'name', p.name) ELSE json_object('id', p.id, 'name', p.name, 'tag', p.tag) END`;

/** What the SQL of a request depends on. */
export interface ListShape {
  sort: PlantSort;
  /** A start key is given: @afterId, and @afterName for the name orders. */
  after: boolean;
  /** How many tags (@t0, @t1, …); 0: any tag or none. */
  tags: number;
  /**
   * How q applies: not at all; through the trigram index (@match), which holds every plant; through the
   * index and the plants written after its mark ('recent': the index is behind); or by scanning name_fold
   * (@fold). Every name found is checked against @fold either way.
   */
  q: 'none' | 'index' | 'recent' | 'scan';
}

/**
 * The columns each order sorts by, ascending or descending, with the id last so that the order is total.
 * name_fold is a function of name, so (name, name_fold, id) is the order (name, id); saying it lets the
 * name indexes, (name, name_fold) and (tag, name, name_fold) with the rowid (the id) ending each entry,
 * give the order as they stand and hold name_fold for q, so that walking them for q reads no plant.
 */
export const ORDERS: Record<PlantSort, { columns: string[]; descending: boolean }> = {
  id: { columns: ['id'], descending: false },
  '-id': { columns: ['id'], descending: true },
  name: { columns: ['name', 'name_fold', 'id'], descending: false },
  '-name': { columns: ['name', 'name_fold', 'id'], descending: true },
};

/** `ORDER BY` terms for the order (or its reverse), the id spelt `id`, the other columns those of `table`. */
export function orderBy(sort: PlantSort, id = 'p.id', reverse = false, table = 'p'): string {
  const { columns, descending } = ORDERS[sort];
  return columns.map((c) => `${c === 'id' ? id : `${table}.${c}`}${descending !== reverse ? ' DESC' : ''}`).join(', ');
}

/** The rows after the start key, in the order. */
export function afterKey(sort: PlantSort, id: string): string {
  const { columns, descending } = ORDERS[sort];
  const op = descending ? '<' : '>';
  return columns.length === 1 ? `${id} ${op} @afterId` : `(p.name, p.name_fold, ${id}) ${op} (@afterName, @afterFold, @afterId)`;
}

export function tagsIn(count: number): string {
  return `p.tag IN (${Array.from({ length: count }, (_, i) => `@t${i}`).join(', ')})`;
}

/** The conditions of the filter (not of the start key), for rows of `plants p`. */
function filters(shape: Pick<ListShape, 'tags' | 'q'>): string[] {
  const where: string[] = [];
  if (shape.tags > 0) where.push(tagsIn(shape.tags));
  // Found through the index or not, q is checked against the stored name: the index may be behind, and
  // its terms are a few of q's trigrams, not q.
  if (shape.q !== 'none') where.push('instr(p.name_fold, @fold) > 0');
  return where;
}

/**
 * The plants the change feed names after the search index's mark: written since the index was last
 * brought up to date (few: it follows the writes within moments), each read by id and checked by name.
 * Together with the index, every plant: those indexed as they stand, and these.
 */
const UNINDEXED = `unindexed(id) AS (SELECT DISTINCT json_extract(body, '$.data.id') FROM events
    WHERE position > (SELECT value FROM counters WHERE name = 'search_position'))`;

/** The index's matches, when it holds every plant (nothing written after its mark). */
const INDEXED_ALL = { from: 'plants_search s CROSS JOIN plants p ON p.id = s.rowid', id: 's.rowid', where: ['plants_search MATCH @match'] };

/**
 * Whether plants were written after the index's mark, which a search must then read besides it: one seek,
 * in the read's own snapshot, so that the common case (nothing behind) reads the index alone.
 */
export const RECENT_SQL = "SELECT EXISTS (SELECT 1 FROM events WHERE position > (SELECT value FROM counters WHERE name = 'search_position'))";

/** The index's matches, less the plants the feed names after the mark (read from the plants instead). */
const INDEXED = {
  from: 'plants_search s CROSS JOIN plants p ON p.id = s.rowid',
  id: 's.rowid',
  where: ['plants_search MATCH @match', 's.rowid NOT IN (SELECT id FROM unindexed)'],
};
const UNINDEXED_PLANTS = { from: 'unindexed u CROSS JOIN plants p ON p.id = u.id', id: 'p.id', where: [] };

/** The compound select's ORDER BY: by the key columns each arm adds (k_id, k_name, k_fold). */
function keyOrder(sort: PlantSort): string {
  const { columns, descending } = ORDERS[sort];
  return columns.map((c) => `k_${c === 'name_fold' ? 'fold' : c}${descending ? ' DESC' : ''}`).join(', ');
}

/**
 * From where rows come, and how the id is spelt there. The index is named (INDEXED BY, NOT INDEXED,
 * CROSS JOIN for the join order) rather than left to the planner, which without statistics would take
 * (tag, name, name_fold) for `tag IN (…) ORDER BY id` because it covers the columns, and sort every plant of
 * the tags for one page; plants_tag_id gives each tag's rows in id order, and SQLite stops each tag's
 * range once the page is full.
 */
function source(shape: Pick<ListShape, 'q' | 'tags'> & { sort?: PlantSort }): { from: string; id: string; where: string[] } {
  const byName = shape.sort !== undefined && ORDERS[shape.sort].columns.length > 1;
  const index =
    shape.tags > 0 ? `INDEXED BY ${byName ? 'plants_tag_name_id' : 'plants_tag_id'}` : byName ? 'INDEXED BY plants_name_id' : 'NOT INDEXED';
  return { from: `plants p ${index}`, id: 'p.id', where: [] };
}

/**
 * Plants a scan for q examines at most, per page or per chunk of an export: a q of 1 or 2 characters (no
 * trigram to look up) or one walked along a name order is checked against each name in the order's index,
 * and one that few names hold would otherwise read every plant in one statement (SQLite's statements run on
 * the event loop: a million names held it for a few hundred milliseconds). A page whose window ends before
 * it is full is answered as it is, with the next page starting after the last plant examined (SCAN_END_SQL).
 * The name orders read their index alone (measured in bench/RESULTS.md).
 */
export const SCAN_WINDOW = 100_000;

/** The plants in the order after the start key, tags applied, q not: what a scan examines, @window of them. */
function scanWindow(shape: ListShape, columns: string): string {
  const { from, id } = source(shape);
  const conditions = [...(shape.tags > 0 ? [tagsIn(shape.tags)] : []), ...(shape.after ? [afterKey(shape.sort, id)] : [])];
  return `SELECT ${columns} FROM ${from} ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''} ORDER BY ${orderBy(shape.sort, id)}`;
}

/** The last plant a scan's window examined (id, name), when the window was full: the next page starts after it. */
export function scanEndSql(shape: ListShape): string {
  return `${scanWindow(shape, 'p.id, p.name')} LIMIT 1 OFFSET @window - 1`;
}

/**
 * The plants of the shape, in its order, at most @take of them: as (id, name, tag), or as the columns
 * given, which may use `plants p`. A scan examines at most @window plants (SCAN_WINDOW).
 */
export function rowsSql(shape: ListShape, columns = 'p.id, p.name, p.tag'): string {
  if (shape.q === 'scan') {
    // The window is read from the order's index alone (it holds name_fold, and the id as its rowid), and
    // only the plants that match from the table: reading every plant examined for its tag cost many times
    // more (measured in bench/RESULTS.md).
    const examined = `${scanWindow(shape, 'p.id, p.name, p.name_fold')} LIMIT @window`;
    return `SELECT ${columns} FROM (${examined}) w CROSS JOIN plants p ON p.id = w.id WHERE instr(w.name_fold, @fold) > 0
      ORDER BY ${orderBy(shape.sort, 'w.id', false, 'w')} LIMIT @take`;
  }
  const select = ({ from, id, where }: { from: string; id: string; where: string[] }, extra = '') => {
    const conditions = [...where, ...filters(shape), ...(shape.after ? [afterKey(shape.sort, id)] : [])];
    return `SELECT ${columns}${extra} FROM ${from} ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}`;
  };
  if (shape.q === 'index') return `${select(INDEXED_ALL)} ORDER BY ${orderBy(shape.sort, INDEXED_ALL.id)} LIMIT @take`;
  if (shape.q !== 'recent') return `${select(source(shape))} ORDER BY ${orderBy(shape.sort, source(shape).id)} LIMIT @take`;
  // The two arms merged in the order, each giving its rows in it (the index's in id order as it stands),
  // read only as far as the page.
  const keys = (id: string) => `, ${id} AS k_id, p.name AS k_name, p.name_fold AS k_fold`;
  return `WITH ${UNINDEXED} ${select(INDEXED, keys(INDEXED.id))} UNION ALL ${select(UNINDEXED_PLANTS, keys(UNINDEXED_PLANTS.id))}
    ORDER BY ${keyOrder(shape.sort)} LIMIT @take`;
}

/**
 * A page's rows as [json, id, name] (read raw, with safeIntegers), in order, one more than the page holds
 * (@take) to know whether more follow: the store joins the JSON texts into the page. Cheaper than making
 * the whole page in one statement (json_group_array over a materialized page, its last key and its count
 * by subqueries), since an ordered aggregate and each materialized subquery build a temporary B-tree
 * (measured in bench/RESULTS.md).
 */
export function pageSql(shape: ListShape): string {
  return rowsSql(shape, `${PLANT_JSON}, p.id, p.name`);
}

/** A row as pageSql reads it. */
export type PageRow = [json: string, id: bigint, name: string];

/** How many plants the filter selects. */
export function countSql(shape: Pick<ListShape, 'tags' | 'q'>): string {
  const count = ({ from, where }: { from: string; where: string[] }) => {
    const conditions = [...where, ...filters(shape)];
    return `SELECT count(*) FROM ${from} ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}`;
  };
  if (shape.q === 'index') return count(INDEXED_ALL);
  if (shape.q !== 'recent') return count(source(shape));
  return `WITH ${UNINDEXED} SELECT (${count(INDEXED)}) + (${count(UNINDEXED_PLANTS)})`;
}

/**
 * The parameters of a filter (q folded; tags as @t0, @t1, …) and the shape its SQL takes. `scan`: find q
 * by scanning name_fold whatever its length.
 */
export function filterParams(
  filter: PlantFilter,
  { scan = false, recent = true }: { scan?: boolean; recent?: boolean } = {},
): { shape: Pick<ListShape, 'tags' | 'q'>; params: Record<string, unknown> } {
  const params: Record<string, unknown> = {};
  const tags = [...new Set(filter.tags ?? [])];
  tags.forEach((tag, i) => (params[`t${i}`] = tag));
  let q: ListShape['q'] = 'none';
  if (filter.q !== undefined) {
    const folded = foldCase(filter.q);
    // Characters, not UTF-16 units: the tokenizer counts code points.
    params.fold = folded;
    const terms = scan ? [] : searchTerms(folded);
    if (terms.length > 0) {
      q = recent ? 'recent' : 'index';
      // FTS5 strings, one trigram each, all of them required (not as a phrase: the names are checked).
      params.match = terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(' AND ');
    } else {
      q = 'scan';
    }
  }
  return { shape: { tags: tags.length, q }, params };
}

/**
 * The shape and parameters of a list request (`take` rows fetched: the page and one more, or an export's
 * chunk). `walk`: in the name orders, find q by walking the order's index checking name_fold (a q many
 * names hold, or one of many chunks of an export, each going on where the last stopped) rather than
 * sorting the trigram index's matches.
 */
export function listParams(
  options: Omit<ListOptions, 'limit'>,
  take: number,
  { walk = false, recent = true, window = SCAN_WINDOW }: { walk?: boolean; recent?: boolean; window?: number } = {},
): { shape: ListShape; params: Record<string, unknown> } {
  const sort = options.sort ?? 'id';
  const { shape, params } = filterParams(options, { scan: walk && ORDERS[sort].columns.length > 1, recent });
  params.take = take;
  // With several tags each tag's range is read up to the window (then merged): the window is shared out.
  if (shape.q === 'scan') params.window = Math.max(Math.min(window, 1000), Math.floor(window / Math.max(1, shape.tags)));
  const after = options.after;
  if (after !== undefined) {
    params.afterId = after.id;
    if (ORDERS[sort].columns.length > 1) {
      if (after.name === undefined) throw new TypeError(`sort=${sort} needs the name of the key to start after`);
      params.afterName = after.name;
      params.afterFold = foldCase(after.name);
    }
  }
  return { shape: { ...shape, sort, after: after !== undefined }, params };
}
