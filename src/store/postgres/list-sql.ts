import { foldCase } from '../../model/fold.js';
import type { ListOptions, PlantFilter, PlantSort } from '../store.js';
import { searchWalk } from '../search-walk.js';
import { named } from './query.js';

/**
 * The SQL of lists, counts and exports on PostgreSQL, built for the shape of each request. Every order
 * is served by an index, every page by keyset:
 * - id: the primary key; by tag: plants_tag_id (tag, id);
 * - name: plants_name_id (name COLLATE "C", id); by tag: plants_tag_name_id (tag, name COLLATE "C", id);
 *   COLLATE "C" orders by code point, as SQLite does, whatever collation the database has; both include
 *   name_fold (plants_name_id the tag too), so that a page, and q walked along the order, reads the
 *   index alone;
 * - tags without q: one branch per tag, each stopping at the page's end (… LIMIT), merged: a page
 *   costs the same at any depth, however many plants the tags hold;
 * - q: name_fold LIKE '%…%', which the trigram index plants_name_fold_trgm serves when pg_trgm is there.
 *   A page of q alone (3 characters or more) first walks the order's index a little (searchWalk), then
 *   reads the trigram index's matches and sorts them (searchRowsSql): the statistics say how many names
 *   hold q, not where they stand in the order, and the planner, left to choose, walked the name index
 *   past most names to a common word that stood after them. With tags, for a shorter q, and for counts
 *   and exports, the planner decides from the statistics, so statements with q (or tags) are planned for their own values (left unnamed,
 *   see query.ts); the others are named, planned once per connection.
 * EXPLAIN in test/store/postgres/search.process.test.ts holds each shape to its index.
 */

/**
 * A plants row as JSON text: `{"id":…,"name":…}`, with `"tag":…` when it has one. to_json's escaping of
 * text is JSON.stringify's, byte for byte (the store contract tests check every UTF-16 code unit), and
 * ids are written as exact integers.
 */
const PLANT_JSON = `'{"id":' || id || ',"name":' || to_json(name)::text || CASE WHEN tag IS NULL THEN '}' ELSE ',"tag":' || to_json(tag)::text || '}' END`;

/** The columns each order sorts by, the id last so that the order is total. */
const ORDERS: Record<PlantSort, { columns: string[]; descending: boolean }> = {
  id: { columns: ['p.id'], descending: false },
  '-id': { columns: ['p.id'], descending: true },
  name: { columns: ['p.name COLLATE "C"', 'p.id'], descending: false },
  '-name': { columns: ['p.name COLLATE "C"', 'p.id'], descending: true },
};

function orderBy(sort: PlantSort, reverse = false): string {
  const { columns, descending } = ORDERS[sort];
  return columns.map((c) => `${c}${descending !== reverse ? ' DESC' : ''}`).join(', ');
}

/** Query parameters, numbered as they are added. */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown, type = ''): string {
    this.values.push(value);
    return `$${this.values.length}${type}`;
  }
}

/** LIKE's wildcards and escape character, taken literally. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The conditions of the filter, for rows of `plants p` (tags as one array parameter). */
function filters(filter: PlantFilter, params: Params, tags: boolean): string[] {
  const where: string[] = [];
  if (tags) where.push(`p.tag = ANY (${params.add([...new Set(filter.tags)], '::text[]')})`);
  // Folded by the database, as name_fold was (the migration plant_search): the two folds cannot differ.
  if (filter.q !== undefined) where.push(`p.name_fold LIKE '%' || plant_fold(${params.add(likeLiteral(filter.q))}) || '%'`);
  return where;
}

function afterKey(options: Omit<ListOptions, 'limit'>, sort: PlantSort, params: Params): string[] {
  const after = options.after;
  if (after === undefined) return [];
  const op = ORDERS[sort].descending ? '<' : '>';
  const id = params.add(String(after.id), '::bigint');
  if (ORDERS[sort].columns.length === 1) return [`p.id ${op} ${id}`];
  if (after.name === undefined) throw new TypeError(`sort=${sort} needs the name of the key to start after`);
  return [`(p.name COLLATE "C", p.id) ${op} (${params.add(after.name)}, ${id})`];
}

const where = (conditions: string[]) => (conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '');

/**
 * The plants of a request (id, name, tag), in its order, at most `take` (an SQL expression) of them.
 * Tags without q, for a page: one branch per tag, each at most `take` rows from its own index range,
 * merged. Each tag is a parameter of its own and such statements are planned for their values (left
 * unnamed): from the statistics, a common tag is read by walking the order's index and filtering, a rare
 * one from its (tag, …) index; planned for an average tag, a rare one would walk the whole table.
 */
function rowsSql(options: Omit<ListOptions, 'limit'>, params: Params, take: string, columns: string): string {
  const sort = options.sort ?? 'id';
  const tags = [...new Set(options.tags ?? [])];
  if (tags.length > 0 && options.q === undefined && take !== 'ALL') {
    const after = afterKey(options, sort, params);
    const branches = tags.map(
      (tag) =>
        `(SELECT p.id, p.name, p.tag FROM plants p ${where([`p.tag = ${params.add(tag)}`, ...after])} ORDER BY ${orderBy(sort)} LIMIT ${take})`,
    );
    return `SELECT ${columns} FROM (${branches.join(' UNION ALL ')}) p ORDER BY ${orderBy(sort)} LIMIT ${take}`;
  }
  const conditions = [...filters(options, params, tags.length > 0), ...afterKey(options, sort, params)];
  return `SELECT ${columns} FROM plants p ${where(conditions)} ORDER BY ${orderBy(sort)} LIMIT ${take}`;
}

/**
 * The ORDER BY of an order through an expression no index gives (the same order: name || '' is the name,
 * id + 0 the id), so that the planner finds the rows by the filter's own index and sorts them.
 */
function sortedOrder(sort: PlantSort): string {
  const descending = ORDERS[sort].descending ? ' DESC' : '';
  return ORDERS[sort].columns.length === 1 ? `p.id + 0${descending}` : `(p.name || '') COLLATE "C"${descending}, p.id${descending}`;
}

/**
 * A page of q alone (id, name, tag), at most `take` plants, in two steps (see searchWalk): `walked`, the
 * first searchWalk(take) plants of the order after the key, along its index, checked by name; when `take`
 * of them hold q, they are the page; else `sorted`, every match after the key, found through the trigram
 * index (as planned for q's own value) and sorted by an expression no index gives. Each step a CTE that
 * runs only when read, and `sorted` read only under a condition on `walked`'s count: the planner gave a
 * plain second arm of the union a parallel plan, whose worker was started (costing more than the whole
 * search) before the condition was read, and two statements cost a second round trip.
 */
function searchRowsSql(options: ListOptions, params: Params, take: string): string {
  const sort = options.sort ?? 'id';
  const holds = filters(options, params, false);
  const after = afterKey(options, sort, params);
  const walk = params.add(searchWalk(options.limit + 1), '::int');
  return `WITH walked AS MATERIALIZED (SELECT p.id, p.name, p.tag FROM (SELECT p.id, p.name, p.tag, p.name_fold FROM plants p ${where(after)}
      ORDER BY ${orderBy(sort)} LIMIT ${walk}) p ${where(holds)} ORDER BY ${orderBy(sort)} LIMIT ${take}),
    sorted AS MATERIALIZED (SELECT p.id, p.name, p.tag FROM plants p ${where([...holds, ...after])} ORDER BY ${sortedOrder(sort)} LIMIT ${take})
    SELECT * FROM walked WHERE (SELECT count(*) FROM walked) = ${take}
    UNION ALL SELECT * FROM sorted WHERE (SELECT count(*) FROM walked) < ${take}`;
}

/**
 * Whether a page of q is found by searchRowsSql: q alone, of 3 characters or more, which the trigram index
 * can find. With tags the planner chooses from their statistics and q's; a shorter q has no trigram, its
 * matches would be every plant read and sorted, and the planner walks the order's index as before.
 */
function searchesAlone(options: PlantFilter): boolean {
  return options.q !== undefined && (options.tags?.length ?? 0) === 0 && [...foldCase(options.q)].length >= 3;
}

export interface Statement {
  text: string;
  values: unknown[];
}

/** Statement names by text: those without q or tags are named (prepared once per connection, query.ts). */
const names = new Map<string, string>();

function maybeNamed(text: string, filter: PlantFilter): string {
  if (filter.q !== undefined || (filter.tags?.length ?? 0) > 0 || names.has(text)) return text;
  names.set(text, `plant_list_${names.size + 1}`);
  return named(names.get(text)!, text);
}

/**
 * One page as one row (json, count, last_id, last_name, more): the plants are fetched once, one more
 * than the page holds, to know whether more follow.
 */
export function pageStatement(options: ListOptions): Statement {
  const params = new Params();
  const limit = params.add(options.limit, '::int');
  const sort = options.sort ?? 'id';
  const take = `${limit} + 1`;
  const fetched = searchesAlone(options) ? searchRowsSql(options, params, take) : rowsSql(options, params, take, 'p.id, p.name, p.tag');
  const text = `WITH fetched AS MATERIALIZED (${fetched}),
    page AS MATERIALIZED (SELECT p.id, p.name, p.tag FROM fetched p ORDER BY ${orderBy(sort)} LIMIT ${limit})
    SELECT COALESCE('[' || string_agg(${PLANT_JSON}, ',' ORDER BY ${orderBy(sort)}) || ']', '[]') AS json, count(*)::int AS count,
           (SELECT p.id::text FROM page p ORDER BY ${orderBy(sort, true)} LIMIT 1) AS last_id,
           (SELECT p.name FROM page p ORDER BY ${orderBy(sort, true)} LIMIT 1) AS last_name,
           (SELECT count(*) FROM fetched) > ${limit} AS more
    FROM page p`;
  return { text: maybeNamed(text, options), values: params.values };
}

/** A page's row as pageStatement reads it. */
export interface PageRow {
  json: string;
  count: number;
  last_id: string | null;
  last_name: string | null;
  more: boolean;
}

/** How many plants the filter selects. */
export function countStatement(filter: PlantFilter): Statement {
  const params = new Params();
  const text = `SELECT count(*) AS count FROM plants p ${where(filters(filter, params, (filter.tags?.length ?? 0) > 0))}`;
  return { text: maybeNamed(text, filter), values: params.values };
}

/** Every plant of an export, in its order (id as text), for a cursor. */
export function exportStatement(options: Omit<ListOptions, 'limit' | 'after'>): Statement {
  const params = new Params();
  return { text: rowsSql(options, params, 'ALL', 'p.id::text AS id, p.name, p.tag'), values: params.values };
}
