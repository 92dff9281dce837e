import { createHmac, timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { PageLinkForm } from '../config/server.js';
import { HttpError } from './errors.js';

/**
 * The one paging rule's cursors: every list (plants, events, tokens, webhook endpoints, deliveries) says
 * where its next page starts with an opaque `cursor` the service made, in its Link header. A cursor is
 * base64url of a version byte, a 96-bit HMAC-SHA-256 and the JSON text `["<list>", "<scope>", …position]`:
 * the list it was made for, a fingerprint of that list's filters and order, and the place after which the
 * next page starts (an id; a name and an id in the name orders). A cursor the service did not make, or
 * one changed by a single bit, fails its MAC and is refused (400 naming `cursor`), as is one made for
 * another list or other filters, rather than answering a page of something else.
 *
 * The MAC's key is the service's own, the same in every instance and every release: instances on one
 * PostgreSQL accept each other's cursors with nothing to share or configure, and a release accepts the
 * cursors of the one before. It makes a cursor tamper-evident, not secret: what a cursor holds, a place in
 * a list, grants nothing the documented `after` parameter does not, and a client never needs to read it.
 */

/** The version byte of this layout. Cursors of the release before (plants only) are JSON text: they begin with `[`. */
const VERSION = 2;
const MAC_BYTES = 12;
const KEY = 'plant-store list cursor, layout 2';

/** A cursor holds a name of up to 256 characters, JSON-escaped, in base64url: 4096 is room enough. */
const CURSOR_MAX = 4096;

/** The `cursor` query parameter of every list; `filters`: the parameters it is bound to, if any. */
export function CursorParam(filters?: string) {
  return Type.String({
    minLength: 1,
    maxLength: CURSOR_MAX,
    pattern: '^[A-Za-z0-9_-]+$',
    description: `Where the page starts: the cursor of the Link header (rel="next") of the page before, as it is${filters === undefined ? '' : `, with the same ${filters}`} (else 400). Opaque, made by the service. Not with \`after\``,
  });
}

function mac(json: Buffer): Buffer {
  return createHmac('sha256', KEY).update(json).digest().subarray(0, MAC_BYTES);
}

/**
 * PAGE_LINKS (config/server.ts): the form the Links of this instance write. `signed`: a cursor. `1.0`: what
 * release 1.0 wrote and reads (`after=<id>`; GET /plants's unsigned cursor), for a fleet being upgraded
 * from 1.0.x, so that a client following a Link from a new instance to an old one is not refused. Both
 * forms are read always.
 */
export type { PageLinkForm } from '../config/server.js';

/** The query parameter of a Link's next page, and its value. */
export type NextPage = readonly ['cursor' | 'after', string];

/** The next page of a list keyed by string ids, after `id`, in the form PAGE_LINKS asks for. */
export function nextPage(form: PageLinkForm, list: string, scope: string, id: string): NextPage {
  return form === '1.0' ? ['after', id] : ['cursor', makeCursor(list, scope, [id])];
}

/** A cursor for the page after `position` of `list` with the filters whose fingerprint is `scope`. */
export function makeCursor(list: string, scope: string, position: readonly string[]): string {
  const json = Buffer.from(JSON.stringify([list, scope, ...position]));
  return Buffer.concat([Buffer.of(VERSION), mac(json), json]).toString('base64url');
}

export function notMade(why: string): HttpError {
  return new HttpError('invalid_cursor', `querystring.cursor is not a cursor this service made (${why}): take it from a Link header as it is`, {
    field: 'querystring.cursor',
  });
}

export function otherScope(filters: string): HttpError {
  return new HttpError(
    'invalid_cursor',
    `querystring.cursor was made for other filters or another order (${filters} must be those of the request that gave it): start again without it`,
    { field: 'querystring.cursor' },
  );
}

/** One decoder for every cursor: a fatal decoder holds no state between whole-buffer decodes. */
export const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The bytes of a cursor as sent, or 400: Node decodes base64url leniently (it skips what is not
 * base64url), so only the one spelling it would write is taken.
 */
export function cursorBytes(text: string): Buffer {
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.toString('base64url') !== text) throw notMade('not base64url');
  return bytes;
}

/** Whether these bytes are of this layout (else, for plants, perhaps the release before's). */
export function isCurrentLayout(bytes: Buffer): boolean {
  return bytes[0] === VERSION;
}

/**
 * The position a cursor holds, for this list and scope; 400 naming `cursor` when the service did not make
 * it, it was changed, or it was made for another list (`filters` names the parameters the scope is of).
 */
export function readCursor(bytes: Buffer, list: string, scope: string, filters: string): string[] {
  if (bytes.length <= 1 + MAC_BYTES || !isCurrentLayout(bytes)) throw notMade('unknown layout');
  const json = bytes.subarray(1 + MAC_BYTES);
  if (!timingSafeEqual(bytes.subarray(1, 1 + MAC_BYTES), mac(json))) throw notMade('it does not check out: changed, or made elsewhere');
  // Made here, so well formed: read defensively all the same.
  let fields: unknown;
  try {
    fields = JSON.parse(UTF8.decode(json));
  } catch {
    throw notMade('not JSON');
  }
  if (!Array.isArray(fields) || fields.length < 3 || !fields.every((field) => typeof field === 'string')) throw notMade('unknown layout');
  const [madeFor, madeIn, ...position] = fields;
  if (madeFor !== list) {
    throw new HttpError('invalid_cursor', `querystring.cursor was made for another list (${madeFor}), not this one: start again without it`, {
      field: 'querystring.cursor',
    });
  }
  if (madeIn !== scope) throw otherScope(filters);
  return position;
}

/**
 * Where a page of a list keyed by a string id starts: after the id in its cursor, or the id `after` names
 * (the documented alias, as the release before wrote its Links), or at the start. Both at once is 400.
 */
export function startAfter(
  query: { cursor?: string | undefined; after?: string | undefined },
  list: string,
  scope = '',
  filters = 'the filters',
): string | undefined {
  const { cursor, after } = query;
  if (cursor !== undefined && after !== undefined) throw bothGiven();
  if (cursor === undefined) return after;
  const position = readCursor(cursorBytes(cursor), list, scope, filters);
  if (position.length !== 1) throw notMade('unknown layout');
  return position[0];
}

export function bothGiven(): HttpError {
  return new HttpError(
    'conflicting_parameters',
    'querystring.cursor and querystring.after cannot be given together: the cursor alone says where the page starts',
    { field: 'querystring.after' },
  );
}
