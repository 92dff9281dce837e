import { hash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ENTITY_TAGS, matchesOnRead, notModified } from './conditional.js';
import { HttpError } from './errors.js';

/**
 * Caching of reads (RFC 9111): every answer is `Cache-Control: no-store` unless its route says otherwise
 * (security.ts). A read that has an ETag is `private, no-cache` instead: a client (a browser's cache, the
 * typed client's) may keep it and must ask again before using it, and `If-None-Match` with the ETag costs a
 * 304 without a body instead of the whole answer. `private`: every such answer needs a token, and no shared
 * cache may keep one. Answers that hold a secret (a token's, a webhook endpoint's) stay `no-store`.
 *
 * The ETag of a plant is its version (strong, `"7"`, conditional.ts): no hashing on GET /plants/{id}. A
 * list page, or a small read with no version of its own, is the weak `W/"<hash>"` of its JSON and of the
 * headers that say more of it (the next page's link, the total): equal answers have equal tags, and a
 * changed page (a plant added, renamed, deleted, a next page that appeared) another. Weak, because the tag
 * stands for the content, not for the bytes of one encoding of it (RFC 9110 §8.8.1).
 */

/** What a read that can be revalidated answers in Cache-Control. */
export const REVALIDATE_PRIVATE = 'private, no-cache';
/** … and one anybody may read (/openapi.json). */
export const REVALIDATE_PUBLIC = 'no-cache';

/** The headers of a list's answer that say something of its content, so its ETag covers them too. */
const CONTENT_HEADERS = ['link', 'x-total-count', 'missing-ids', 'unlisted-token-sources'] as const;

/** The weak ETag of a JSON text and the content headers the reply carries so far. */
export function weakEtag(reply: FastifyReply, json: string): string {
  let text = json;
  for (const name of CONTENT_HEADERS) {
    const value = reply.getHeader(name);
    if (value !== undefined) text += `\n${name}: ${String(value)}`;
  }
  return `W/"${hash('sha1', text, 'base64url')}"`;
}

/**
 * Adds header names to the answer's Vary (RFC 9110 §12.5.5), keeping those set before it (CORS's
 * `Origin`): the answer depends on them, so a cache must not give it to a request that sends others.
 */
export function vary(reply: FastifyReply, ...names: string[]): FastifyReply {
  const before = reply.getHeader('vary');
  // Most answers had no Vary yet (every GET by id and POST passes here): no list to merge.
  if (before === undefined && names.length === 1) return reply.header('vary', names[0]);
  const have =
    before === undefined
      ? []
      : String(before)
          .split(',')
          .map((name) => name.trim());
  const lower = new Set(have.map((name) => name.toLowerCase()));
  const added = names.filter((name) => !lower.has(name.toLowerCase()));
  return added.length === 0 ? reply : reply.header('vary', [...have, ...added].join(', '));
}

/** The 412 of a read whose If-Match names no ETag of its answer. */
function readPreconditionFailed(): HttpError {
  return new HttpError(
    'precondition_failed',
    'If-Match names no current ETag of this answer (strong comparison: a weak ETag W/"…" never matches, nor does an answer without one): it changed',
  );
}

/** The read's 412, as the OpenAPI document shows it (errorExamples of each read that revalidates). */
export const READ_PRECONDITION_FAILED = readPreconditionFailed();

/**
 * The preconditions of a read (RFC 9110 §13.2.2): If-Match first, whose failure is a 412 (thrown; §13.1.1
 * asks for it on every method), then If-None-Match: true when it names the ETag (or is `*`), so the answer
 * is 304 without a body. `etag`: the answer's, undefined for one without (an export, a stream). A read
 * without If-Match pays one property read for it.
 */
export function notModifiedRead(request: FastifyRequest, etag: string): boolean {
  const { headers } = request;
  const match = headers['if-match'];
  if (match !== undefined && !matchesOnRead(match, etag)) throw readPreconditionFailed();
  return notModified(headers['if-none-match'], etag);
}

/** If-Match on a read whose answer has no ETag (an export, an event stream): only `*` holds. */
export function checkUnversionedRead(request: FastifyRequest): void {
  const match = request.headers['if-match'];
  if (match !== undefined && !matchesOnRead(match, undefined)) throw readPreconditionFailed();
}

/**
 * Sets the ETag and the Cache-Control of a read that can be revalidated; true when the request's
 * If-None-Match names the ETag (or is `*`), so the answer is 304 without a body; 412 (thrown) when its
 * If-Match names none.
 */
export function revalidated(request: FastifyRequest, reply: FastifyReply, etag: string, cacheControl = REVALIDATE_PRIVATE): boolean {
  reply.header('etag', etag).header('cache-control', cacheControl);
  return notModifiedRead(request, etag);
}

/** A JSON answer with its weak ETag: 304 when If-None-Match names it, else the JSON text as it is. */
export function sendRevalidated(request: FastifyRequest, reply: FastifyReply, json: string, cacheControl = REVALIDATE_PRIVATE): FastifyReply {
  if (revalidated(request, reply, weakEtag(reply, json), cacheControl)) return reply.code(304).send();
  // JSON text with a JSON type is sent as it is, not through the serializer again.
  return reply.type('application/json; charset=utf-8').send(json);
}

/**
 * sendRevalidated of a value, written by the route's own 200 serializer (its response schema): the same
 * bytes the route would send without an ETag.
 */
export function sendSerializedRevalidated(request: FastifyRequest, reply: FastifyReply, value: unknown): FastifyReply {
  // A route with a response schema serializes to text (fast-json-stringify).
  return sendRevalidated(request, reply, reply.serialize(value) as string);
}

/**
 * A resource that has no version of its own but is written by its id (a webhook endpoint, a stored token):
 * its read's ETag is the strong `"<hash>"` of its JSON, so that a write's If-Match can name it. If-Match
 * compares strongly (RFC 9110 §13.1.1): the weak tag these reads gave up to 1.1.0 never matched, and the
 * writes did not evaluate If-Match at all. A weak tag a client kept from then still revalidates a read
 * (If-None-Match compares weakly): the opaque tag is the same hash.
 */
function resourceEtag(json: string): string {
  return `"${hash('sha1', json, 'base64url')}"`;
}

/** The read of such a resource: its strong ETag; 304 when If-None-Match names it, 412 when If-Match names none. */
export function sendResourceRevalidated(request: FastifyRequest, reply: FastifyReply, value: unknown): FastifyReply {
  const json = reply.serialize(value) as string;
  if (revalidated(request, reply, resourceEtag(json))) return reply.code(304).send();
  return reply.type('application/json; charset=utf-8').send(json);
}

/** The 412 of a write whose If-Match names no current ETag of the resource. */
export function writePreconditionFailed(): HttpError {
  return new HttpError('precondition_failed', 'If-Match names no current ETag of this resource (as its read gives it): it changed; nothing done');
}

/** The write's 412, as the OpenAPI document shows it. */
export const WRITE_PRECONDITION_FAILED = writePreconditionFailed();

/**
 * If-Match on a write to such a resource (RFC 9110 §13.1.1, §13.2.2), judged once the write is known to
 * find it (a 404 ignores the preconditions, §13.2.1) and before anything is done: `json` is the resource as
 * its read answers it now (the same serializer, the same schema). `*` holds; else a strong tag must name it.
 */
export function checkWriteIfMatch(request: FastifyRequest, reply: FastifyReply, value: object, schema: object): void {
  const match = request.headers['if-match'];
  if (
    match !== undefined &&
    !matchesOnRead(match, resourceEtag(reply.serializeInput(value as Record<string, unknown>, schema as Record<string, unknown>)))
  )
    throw writePreconditionFailed();
}

/** The If-Match request header of a write to such a resource, for its headers schema. */
export const IfMatchWriteHeaders = {
  'if-match': Type.Optional(
    Type.String({
      description:
        'Only if the resource is at one of these ETags (as its read gives them: strong comparison), or `*`: otherwise 412, nothing done. Judged once the resource is found (a missing one is 404)',
      ...ENTITY_TAGS,
    }),
  ),
};

/** The 304's description in the OpenAPI document. */
export const NOT_MODIFIED = 'Not modified: the answer is the one whose ETag If-None-Match names';

/** The If-None-Match and If-Match request headers of a read that can be revalidated, for its headers schema. */
export const ConditionalReadHeaders = {
  'if-none-match': Type.Optional(
    Type.String({
      description: 'ETags the client holds (as the ETag header gave them), or `*`: 304 Not Modified when one is current',
      ...ENTITY_TAGS,
    }),
  ),
  'if-match': Type.Optional(
    Type.String({
      description:
        'Only if the answer is at one of these ETags (strong comparison: a weak `W/` tag never matches), or `*`: otherwise 412. Judged before If-None-Match',
      ...ENTITY_TAGS,
    }),
  ),
};

const ETAG_DESCRIPTIONS = {
  version: 'The version as stored, a strong entity tag: `"<version>"`, such as `"7"`',
  weak: 'A weak entity tag of this answer (`W/"…"`): send it as If-None-Match to get 304 while the answer is the same',
  strong: 'An entity tag of these bytes: send it as If-None-Match to get 304 while they are the same',
  resource:
    'A strong entity tag of this resource as answered (`"…"`): send it as If-Match to change or delete it only as it is (else 412), as If-None-Match to get 304 while it is the same',
};

type HeaderDoc = Record<string, { description: string; schema: { type: 'string' } }>;

/**
 * The answer headers of such a read, for the OpenAPI document: its ETag (a version, a weak hash of the
 * answer, a hash of fixed bytes), its Cache-Control, and the request headers it varies by.
 */
export function revalidationHeaders(
  etag: keyof typeof ETAG_DESCRIPTIONS,
  varies: readonly string[] = [],
  cacheControl = REVALIDATE_PRIVATE,
): HeaderDoc {
  const headers: HeaderDoc = {
    ETag: { description: ETAG_DESCRIPTIONS[etag], schema: { type: 'string' } },
    'Cache-Control': { description: `\`${cacheControl}\`: keep it, and revalidate it (If-None-Match) before using it`, schema: { type: 'string' } },
  };
  if (varies.length > 0)
    headers.Vary = { description: `\`${varies.join(', ')}\`: the answer depends on these request headers`, schema: { type: 'string' } };
  return headers;
}
