import { hash } from 'node:crypto';
import { HttpError } from '../http/errors.js';
import { PLANT_SORTS, type PageKey, type PlantSort } from '../store/store.js';
import { foldCase } from '../model/fold.js';
import { parseInt64 } from '../model/plant-id.js';
import { NAME_MAX, STORABLE_TEXT } from '../model/plant.js';

/**
 * The `cursor` of GET /plants: where the next page starts, for one list. Opaque to clients (base64url of
 * a small JSON array): the sort key of the last plant of the page (its id; its name too in the name
 * orders) and a fingerprint of the filters and the order it was made for. Used with other filters or
 * another order it is refused (400), rather than answering a page of some other list. Nothing in it is
 * secret or trusted: it only says where to start, as `after` does, and is checked like any input.
 */

/** What a cursor is bound to: the filters as they select (q folded, tags as a set) and the order. */
export interface CursorScope {
  q?: string | undefined;
  tags: readonly string[];
  sort: PlantSort;
}

/** Bumped if the layout changes: older cursors are then refused as not this service's. */
const VERSION = 1;

const STORABLE = new RegExp(STORABLE_TEXT, 'u');

/** One decoder for every cursor: a fatal decoder holds no state between whole-buffer decodes. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

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

export function encodeCursor(key: { id: PageKey['id']; name: string }, scope: CursorScope): string {
  // JSON.stringify([VERSION, fingerprint, id, name?]) spelt out: the fingerprint is base64url and the id
  // digits, neither needs escaping; the name does.
  const fields = `[${VERSION},"${fingerprint(scope)}","${String(key.id)}"${byName(scope.sort) ? `,${JSON.stringify(key.name)}` : ''}]`;
  return Buffer.from(fields).toString('base64url');
}

function malformed(why: string): HttpError {
  return new HttpError('invalid_cursor', `querystring.cursor is not a cursor this service made (${why}): take it from a Link header as it is`, {
    field: 'querystring.cursor',
  });
}

/** The key a cursor starts after; 400 naming `cursor` when it is malformed or was made for another list. */
export function decodeCursor(text: string, scope: CursorScope): PageKey {
  const bytes = Buffer.from(text, 'base64url');
  // Node decodes leniently (it skips what is not base64url): accept only the one spelling it would write.
  if (bytes.toString('base64url') !== text) throw malformed('not base64url');
  let fields: unknown;
  try {
    fields = JSON.parse(UTF8.decode(bytes));
  } catch {
    throw malformed('not JSON');
  }
  if (!Array.isArray(fields) || fields[0] !== VERSION || typeof fields[1] !== 'string') throw malformed('unknown layout');
  const [, made, idText, name] = fields as [number, string, unknown, unknown];
  const expected = byName(scope.sort) ? 4 : 3;
  if (fields.length !== expected) {
    throw fields.length === 3 || fields.length === 4 ? mismatch() : malformed('unknown layout');
  }
  if (made !== fingerprint(scope)) throw mismatch();
  const id = typeof idText === 'string' ? parseInt64(idText) : undefined;
  if (id === undefined) throw malformed('no valid id');
  if (expected === 3) return { id };
  if (typeof name !== 'string' || [...name].length > NAME_MAX || !STORABLE.test(name)) throw malformed('no valid name');
  return { id, name };
}

function mismatch(): HttpError {
  return new HttpError(
    'invalid_cursor',
    'querystring.cursor was made for other filters or another sort (q, tag and sort must be those of the request that gave it): start again without it',
    { field: 'querystring.cursor' },
  );
}
