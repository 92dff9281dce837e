import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { HttpError } from '../../src/http/errors.js';
import { makeCursor } from '../../src/http/cursors.js';
import { decodeCursor, encodeCursor, type CursorScope } from '../../src/plants/cursor.js';
import { foldCase } from '../../src/model/fold.js';

/**
 * The cursor's layout, unit by unit: a cursor is made once per scope's fingerprint (kept, not hashed per
 * page), checked by its MAC (any change refused), refused for any other list however many scopes were
 * seen between; and the release before's cursors are still taken. Refusals over HTTP, forged and
 * malformed cursors included, are in search.test.ts, search-parameters.test.ts and test/http/paging.test.ts.
 */

/** A cursor of the release before, made the slow way: SHA-256 of the canonical scope, JSON, base64url. */
function released(key: { id: number | bigint; name: string }, { q, tags, sort }: CursorScope): string {
  const canonical = JSON.stringify([sort, q === undefined ? null : foldCase(q), [...new Set(tags)].sort()]);
  const fingerprint = createHash('sha256').update(canonical).digest('base64url').slice(0, 16);
  const fields: unknown[] = [1, fingerprint, String(key.id)];
  if (sort === 'name' || sort === '-name') fields.push(key.name);
  return Buffer.from(JSON.stringify(fields)).toString('base64url');
}

const SCOPES: CursorScope[] = [
  { tags: [], sort: 'id' },
  { tags: [], sort: '-id' },
  { tags: [], sort: 'name' },
  { tags: [], sort: '-name' },
  { q: 'Fern', tags: [], sort: 'id' },
  { q: 'ΣΊΣΥΦΟΣ straße', tags: ['b', 'a', 'b'], sort: '-name' },
  { tags: ['tropical'], sort: 'name' },
  { q: 'x"\\\u2028', tags: ['"', '\\'], sort: 'id' },
];

const KEYS = [
  { id: 1, name: 'Monstera' },
  { id: -42, name: 'a "quoted" \\ name\u0001\u2028' },
  { id: 2n ** 63n - 1n, name: 'Ωμέγα 🌿' },
];

function refused(text: string, scope: CursorScope): void {
  assert.throws(
    () => decodeCursor(text, scope),
    (error: unknown) => error instanceof HttpError && error.statusCode === 400 && error.message.startsWith('querystring.cursor'),
  );
}

describe('list cursors', () => {
  it('say where they were made, every order, filter and key, the same each time', () => {
    for (const scope of SCOPES) {
      for (const key of KEYS) {
        const cursor = encodeCursor(key, scope);
        // Twice: the second from the kept fingerprint.
        assert.equal(encodeCursor(key, scope), cursor);
        assert.notEqual(cursor, released(key, scope), 'the new layout, not the one before');
        const decoded = decodeCursor(cursor, scope);
        assert.equal(BigInt(decoded.id), BigInt(key.id));
        assert.equal(decoded.name, scope.sort.endsWith('name') ? key.name : undefined);
      }
    }
  });

  it('of the release before are still taken (a rolling upgrade), for their own list only', () => {
    for (const scope of SCOPES) {
      for (const key of KEYS) {
        const decoded = decodeCursor(released(key, scope), scope);
        assert.equal(BigInt(decoded.id), BigInt(key.id));
        assert.equal(decoded.name, scope.sort.endsWith('name') ? key.name : undefined);
      }
    }
    refused(released({ id: 1, name: 'a' }, { tags: [], sort: 'id' }), { tags: [], sort: '-id' });
    refused(released({ id: 1, name: 'a' }, { tags: [], sort: 'name' }), { tags: ['x'], sort: 'name' });
  });

  it('are refused when any byte is changed, or when made for another list', () => {
    const scope: CursorScope = { q: 'fern', tags: ['a'], sort: 'name' };
    const bytes = Buffer.from(encodeCursor({ id: 42, name: 'Fern' }, scope), 'base64url');
    for (let at = 0; at < bytes.length; at++) {
      for (const flip of [0x01, 0x80]) {
        const changed = Buffer.from(bytes);
        changed[at]! ^= flip;
        refused(changed.toString('base64url'), scope);
      }
    }
    refused(bytes.subarray(0, -1).toString('base64url'), scope);
    refused(Buffer.concat([bytes, Buffer.of(0x5d)]).toString('base64url'), scope);
    // The same position, made for another list (its MAC good): refused, as from another list.
    assert.throws(
      () => decodeCursor(makeCursor('events', 'fern', ['42', 'Fern']), scope),
      (error: unknown) => error instanceof HttpError && /made for another list \(events\)/.test(error.message),
    );
    refused('AAAAAAAAAAAAAAAAAAAAAA', scope);
  });

  it('are taken with the same filters spelt otherwise, and refused for every other scope', () => {
    const cursor = encodeCursor({ id: 7, name: 'Fern' }, { q: 'Fern', tags: ['b', 'a'], sort: 'name' });
    assert.deepEqual(decodeCursor(cursor, { q: 'FERN', tags: ['a', 'b', 'a'], sort: 'name' }), { id: 7, name: 'Fern' });
    for (const other of [
      { q: 'Fer', tags: ['a', 'b'], sort: 'name' },
      { tags: ['a', 'b'], sort: 'name' },
      { q: 'Fern', tags: ['a'], sort: 'name' },
      { q: 'Fern', tags: ['a', 'b', 'c'], sort: 'name' },
      { q: 'Fern', tags: ['a', 'b'], sort: '-name' },
    ] satisfies CursorScope[]) {
      refused(cursor, other);
    }
    const unfiltered = encodeCursor({ id: 7, name: 'Fern' }, { tags: [], sort: 'id' });
    for (const other of [
      { tags: [], sort: '-id' },
      { q: 'f', tags: [], sort: 'id' },
      { tags: ['a'], sort: 'id' },
    ] satisfies CursorScope[]) {
      refused(unfiltered, other);
    }
  });

  it('keep their meaning however many scopes come between (the kept fingerprints are bounded and emptied)', () => {
    const scope: CursorScope = { q: 'rose', tags: ['garden'], sort: 'id' };
    const cursor = encodeCursor({ id: 3, name: 'Rose' }, scope);
    for (let i = 0; i < 1000; i++) {
      const between: CursorScope = { q: `q${i}`, tags: [`t${i}`], sort: 'id' };
      const made = encodeCursor({ id: i, name: 'x' }, between);
      assert.deepEqual(decodeCursor(made, between), { id: i });
      refused(made, scope);
      refused(cursor, between);
    }
    assert.equal(encodeCursor({ id: 3, name: 'Rose' }, scope), cursor);
    assert.deepEqual(decodeCursor(cursor, scope), { id: 3 });
  });
});
