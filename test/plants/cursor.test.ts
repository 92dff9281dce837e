import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { HttpError } from '../../src/http/errors.js';
import { decodeCursor, encodeCursor, type CursorScope } from '../../src/plants/cursor.js';
import { foldCase } from '../../src/model/fold.js';

/**
 * The cursor's layout, unit by unit: a cursor is made once per scope's fingerprint (kept, not hashed per
 * page), and must still be the very bytes it always was, so that cursors handed out before keep working,
 * and be refused for any other list however many scopes were seen between. Refusals over HTTP, forged and
 * malformed cursors included, are in search.test.ts.
 */

/** The cursor as the layout defines it, made the slow way: SHA-256 of the canonical scope, JSON, base64url. */
function expected(key: { id: number | bigint; name: string }, { q, tags, sort }: CursorScope): string {
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
  it('are the same bytes as the layout spelt out (cursors handed out before still work), every order, filter and key', () => {
    for (const scope of SCOPES) {
      for (const key of KEYS) {
        const cursor = encodeCursor(key, scope);
        assert.equal(cursor, expected(key, scope), JSON.stringify({ scope, key: String(key.id) }));
        // Twice: the second from the kept fingerprint.
        assert.equal(encodeCursor(key, scope), cursor);
        const decoded = decodeCursor(cursor, scope);
        assert.equal(BigInt(decoded.id), BigInt(key.id));
        assert.equal(decoded.name, scope.sort.endsWith('name') ? key.name : undefined);
      }
    }
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
      assert.equal(made, expected({ id: i, name: 'x' }, between));
      refused(made, scope);
      refused(cursor, between);
    }
    assert.equal(encodeCursor({ id: 3, name: 'Rose' }, scope), cursor);
    assert.deepEqual(decodeCursor(cursor, scope), { id: 3 });
  });
});
