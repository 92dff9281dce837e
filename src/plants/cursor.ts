import { hash } from 'node:crypto';
import { cursorBytes, isCurrentLayout, UTF8, makeCursor, notMade, otherScope, readCursor, type PageLinkForm } from '../http/cursors.js';
import { PLANT_SORTS, type PageKey, type PlantSort } from '../store/store.js';
import { foldCase } from '../model/fold.js';
import { parseInt64 } from '../model/plant-id.js';
import { NAME_MAX, STORABLE_TEXT } from '../model/plant.js';

/**
 * The `cursor` of GET /plants: where the next page starts, for one list (http/cursors.ts: opaque, made
 * and checked by the service): the sort key of the last plant of the page (its id; its name too in the
 * name orders), bound to a fingerprint of the filters and the order it was made for. Used with other
 * filters or another order it is refused (400), rather than answering a page of some other list.
 *
 * The release before wrote its cursors unsigned (base64url of `[1, fingerprint, id, name?]`): those are
 * still taken during a rolling upgrade and after it, checked as they were (a documented alias, like
 * `after`), and never made any more.
 */

/** What a cursor is bound to: the filters as they select (q folded, tags as a set) and the order. */
export interface CursorScope {
  q?: string | undefined;
  tags: readonly string[];
  sort: PlantSort;
}

/** The layout of the release before. */
const V1 = 1;
const FILTERS = 'q, tag and sort';

const STORABLE = new RegExp(STORABLE_TEXT, 'u');

/** The fingerprint as it is made: SHA-256 of the scope's canonical form (q folded, tags a sorted set). */
function digest({ q, tags, sort }: CursorScope): string {
  const canonical = JSON.stringify([sort, q === undefined ? null : foldCase(q), [...new Set(tags)].sort()]);
  return hash('sha256', canonical, 'base64url').slice(0, 16);
}

/**
 * Every page with a next one makes a cursor and every page asked with one checks it, so the fingerprint
 * is made once per scope, not per page (its canonical form and hash were most of a cursor's cost,
 * measured in bench/RESULTS.md): the unfiltered lists' (the common case) at start, the others kept as
 * requests spell their scope, a bounded number of them (emptied when full: each scope of a flood of
 * different ones then costs what it did before). The same function of the scope either way, so a cursor
 * is refused for exactly the lists it was before.
 */
const UNFILTERED = new Map<PlantSort, string>(PLANT_SORTS.map((sort) => [sort, digest({ tags: [], sort })]));
const SEEN = new Map<string, string>();
const SEEN_MAX = 256;

function fingerprint(scope: CursorScope): string {
  if (scope.q === undefined && scope.tags.length === 0) return UNFILTERED.get(scope.sort)!;
  const spelt = JSON.stringify([scope.sort, scope.q ?? null, scope.tags]);
  let made = SEEN.get(spelt);
  if (made === undefined) {
    if (SEEN.size >= SEEN_MAX) SEEN.clear();
    made = digest(scope);
    SEEN.set(spelt, made);
  }
  return made;
}

const byName = (sort: PlantSort) => sort === 'name' || sort === '-name';

/** The cursor of the page after `key`: signed, or under PAGE_LINKS=1.0 the release before's (which it can read). */
export function encodeCursor(key: { id: PageKey['id']; name: string }, scope: CursorScope, form: PageLinkForm = 'signed'): string {
  if (form === '1.0') return encodeV1(key, scope);
  return makeCursor('plants', fingerprint(scope), byName(scope.sort) ? [String(key.id), key.name] : [String(key.id)]);
}

/** The release before's layout, `[1, fingerprint, id, name?]` as JSON in base64url, written as it wrote it. */
function encodeV1(key: { id: PageKey['id']; name: string }, scope: CursorScope): string {
  // The fingerprint is base64url and the id digits, neither needs escaping; the name does.
  const fields = `[${V1},"${fingerprint(scope)}","${String(key.id)}"${byName(scope.sort) ? `,${JSON.stringify(key.name)}` : ''}]`;
  return Buffer.from(fields).toString('base64url');
}

/** The key a cursor starts after; 400 naming `cursor` when it is malformed, changed or was made for another list. */
export function decodeCursor(text: string, scope: CursorScope): PageKey {
  const bytes = cursorBytes(text);
  if (!isCurrentLayout(bytes)) return decodeV1(bytes, scope);
  const [idText, name, ...rest] = readCursor(bytes, 'plants', fingerprint(scope), FILTERS);
  if (rest.length > 0 || (name !== undefined) !== byName(scope.sort)) throw notMade('unknown layout');
  return pageKey(idText, name);
}

function pageKey(idText: unknown, name: unknown): PageKey {
  const id = typeof idText === 'string' ? parseInt64(idText) : undefined;
  if (id === undefined) throw notMade('no valid id');
  if (name === undefined) return { id };
  if (typeof name !== 'string' || [...name].length > NAME_MAX || !STORABLE.test(name)) throw notMade('no valid name');
  return { id, name };
}

/** A cursor of the release before: JSON `[1, fingerprint, id, name?]`, checked as that release did. */
function decodeV1(bytes: Buffer, scope: CursorScope): PageKey {
  let fields: unknown;
  try {
    fields = JSON.parse(UTF8.decode(bytes));
  } catch {
    throw notMade('not JSON');
  }
  if (!Array.isArray(fields) || fields[0] !== V1 || typeof fields[1] !== 'string') throw notMade('unknown layout');
  const [, made, idText, name] = fields as [number, string, unknown, unknown];
  const expected = byName(scope.sort) ? 4 : 3;
  if (fields.length !== expected) {
    throw fields.length === 3 || fields.length === 4 ? otherScope(FILTERS) : notMade('unknown layout');
  }
  if (made !== fingerprint(scope)) throw otherScope(FILTERS);
  return pageKey(idText, expected === 3 ? undefined : name);
}
