import type { IfMatch, IfNoneMatch } from '../store/store.js';

/**
 * Conditional requests (RFC 9110 §13) on versioned resources: a version is a counter, its ETag the
 * strong entity tag `"<version>"`.
 */

export function etag(version: number): string {
  return `"${version}"`;
}

/** The entity tags of an If-Match or If-None-Match list, with whether each is weak; undefined for `*`. */
function entityTags(header: string): Array<{ weak: boolean; tag: string }> | undefined {
  if (header.trim() === '*') return undefined;
  const tags: Array<{ weak: boolean; tag: string }> = [];
  for (const match of header.matchAll(/(W\/)?"([^"]*)"/g)) tags.push({ weak: match[1] !== undefined, tag: match[2]! });
  return tags;
}

function version(tag: string): number | undefined {
  return /^(0|[1-9]\d{0,15})$/.test(tag) ? Number(tag) : undefined;
}

/**
 * If-Match as a store precondition: `*` (the resource exists), or the versions its strong ETags name. A
 * weak or foreign tag can never match (strong comparison): a list of only those is an empty list, which
 * fails. Undefined when the header is absent.
 */
export function ifMatch(header: string | undefined): IfMatch | undefined {
  if (header === undefined) return undefined;
  const tags = entityTags(header);
  if (tags === undefined) return '*';
  return tags.flatMap(({ weak, tag }) => {
    const v = weak ? undefined : version(tag);
    return v === undefined ? [] : [v];
  });
}

/** If-None-Match on a read: true when it is `*` or names the current version (weak comparison): answer 304. */
export function noneMatch(header: string | undefined, current: number): boolean {
  if (header === undefined) return false;
  const tags = entityTags(header);
  return tags === undefined || tags.some(({ tag }) => version(tag) === current);
}

/**
 * If-None-Match on a read against an entity tag as sent (`"7"`, `W/"x"`): true when the header is `*` or
 * names it, compared weakly (RFC 9110 §13.1.2: `W/` aside, the opaque tags are equal): answer 304.
 */
export function notModified(header: string | undefined, sent: string): boolean {
  if (header === undefined) return false;
  const tags = entityTags(header);
  if (tags === undefined) return true;
  const opaque = sent.startsWith('W/') ? sent.slice(3, -1) : sent.slice(1, -1);
  return tags.some(({ tag }) => tag === opaque);
}

/**
 * An entity-tag list (RFC 9110 §8.8.3, §13.1): `*`, or ETags each in its double quotes, a weak one with
 * `W/`, comma-separated. `If-Match: 17`, a version without its quotes, is a 400 that says so, rather than a
 * tag that can never match: its 412 would send the client looking for a change that never happened.
 */
export const ENTITY_TAGS = {
  pattern: '^\\s*(\\*|(W/)?"[^"]*"(\\s*,\\s*(W/)?"[^"]*")*)\\s*$',
  patternMeaning: 'must be * or entity tags, each in its double quotes as the ETag header gives it ("17", not 17), comma-separated',
};

/** If-None-Match: `*` on a write: only where no plant exists (PUT and POST /plants create only). */
export function createOnly(header: string | undefined): boolean {
  return header !== undefined && header.trim() === '*';
}

/**
 * If-None-Match's entity tags on a write (RFC 9110 §13.1.2: "if false for other methods, respond 412"):
 * the versions the plant must not be at, compared weakly (`W/"7"` names version 7). Undefined when the
 * header is absent or `*` (createOnly's), or names no version at all (a foreign tag): then it always holds.
 */
export function ifNoneMatch(header: string | undefined): IfNoneMatch | undefined {
  if (header === undefined) return undefined;
  const tags = entityTags(header);
  if (tags === undefined) return undefined;
  const versions = tags.flatMap(({ tag }) => {
    const v = version(tag);
    return v === undefined ? [] : [v];
  });
  return versions.length === 0 ? undefined : versions;
}

/**
 * If-Match on a read (RFC 9110 §13.1.1, an origin server "MUST evaluate the condition" whatever the
 * method): true when it is `*`, or names the strong ETag sent (strong comparison: a weak ETag, or an answer
 * with none, such as an export or a stream, never matches a tag).
 */
export function matchesOnRead(header: string, sent: string | undefined): boolean {
  const tags = entityTags(header);
  if (tags === undefined) return true;
  if (sent === undefined || sent.startsWith('W/')) return false;
  const opaque = sent.slice(1, -1);
  return tags.some(({ weak, tag }) => !weak && tag === opaque);
}
