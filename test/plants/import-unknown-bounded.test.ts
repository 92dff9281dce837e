import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { importUnknownFields, readRows } from '../../src/plants/import.js';
import { testApp, TOKEN } from '../helpers.js';
import { LARGE_DATA } from '../tier.js';

/**
 * A lenient import counts the unknown fields it ignored within a fixed budget (http/unknown-fields.ts,
 * IgnoredFields): the first 20 names with the rows each was in, the distinct others up to 1,000, then only
 * the rows they were in. A review sent 21.8M distinct names (5,443 rows of 4,000): the count held each one,
 * the server reached 1.68 GB and failed with "Map maximum size exceeded", a 500, nothing imported.
 */

/** NDJSON rows, generated as they are read (never held whole): row r has `perRow` unknown fields of its own, named f<r>_<i>. */
function distinctNames(rows: number, perRow: number, firstId = 1): Readable {
  let row = 0;
  return new Readable({
    read() {
      if (row === rows) return void this.push(null);
      const fields: string[] = [];
      for (let i = 0; i < perRow; i++) fields.push(`"f${row}_${i}":0`);
      this.push(`{"id":${firstId + row},"name":"p${row}",${fields.join(',')}}\n`);
      row++;
    },
  });
}

function warnings(response: LightMyRequestResponse): string[] {
  const value = response.headers.warning;
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** The heap's bytes in use once the collector has run: what is still held. */
function heldBytes(): number {
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
setFlagsFromString('--expose-gc');

describe("a lenient import's unknown fields", async () => {
  const t = await testApp(after);
  const importStream = (body: Readable, prefer = 'handling=lenient') =>
    t.app.inject({
      method: 'POST',
      url: '/plants/import',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson', prefer },
      payload: body,
    });

  it('names the first 20 with their rows, counts the distinct others up to 1,000, then says "more than"', async () => {
    // 1,100 distinct names, 10 to a row: 20 named, 1,000 counted, 80 past the count.
    const res = await importStream(distinctNames(110, 10));
    assert.equal(res.statusCode, 200, res.payload);
    assert.deepEqual(res.json(), { created: 110, replaced: 0 });
    const said = warnings(res);
    assert.equal(said.length, 21);
    assert.equal(said[0], '299 - "unknown field \\"f0_0\\" was ignored in 1 row"');
    assert.equal(said[19], '299 - "unknown field \\"f1_9\\" was ignored in 1 row"');
    assert.equal(said[20], '299 - "more than 1000 more unknown fields were ignored, in 108 rows"');
    // Within the budget the count is exact: 30 distinct names, 20 named and 10 more.
    const few = await importStream(distinctNames(3, 10, 1000));
    assert.deepEqual(warnings(few).slice(20), ['299 - "10 more unknown fields were ignored, in 1 row"']);
  });

  it('counts a name in every row it is in, and names cut alike once per row', async () => {
    const long = (tail: string) => `${'x'.repeat(60)}${tail}`;
    const rows = [
      JSON.stringify({ id: 1, name: 'a', tga: 1, [long('1')]: 1, [long('2')]: 2 }),
      JSON.stringify({ id: 2, name: 'b', tga: 2 }),
      JSON.stringify({ id: 3, name: 'c', [long('3')]: 3 }),
    ];
    const res = await importStream(Readable.from([`${rows.join('\n')}\n`]));
    assert.deepEqual(warnings(res), [
      '299 - "unknown field \\"tga\\" was ignored in 2 rows: did you mean \\"tag\\"?"',
      `299 - "unknown field \\"${'x'.repeat(60)}\u2026\\" was ignored in 2 rows"`.replace('\u2026', '\\\\u2026'),
    ]);
  });

  it('holds no more for millions of distinct names than for a thousand: 2.4 million, 800 to a row', LARGE_DATA, async () => {
    const unknownFields = importUnknownFields(false);
    const before = heldBytes();
    // Read through as an import reads them (every row parsed and checked, its fields counted), nothing stored.
    await readRows(distinctNames(3000, 800), { format: 'ndjson', createOnly: false, limit: 2 ** 30, maxRowBytes: 2 ** 20, unknownFields });
    const grown = heldBytes() - before;
    // Each of 2.4M names kept would take about 100 MB of heap (a Map entry and its string); the budget, a few hundred KB.
    assert.ok(grown < 16 * 2 ** 20, `the count holds ${(grown / 2 ** 20).toFixed(1)} MiB after 2.4M distinct names`);
    const said = unknownFields.ignored.warnings();
    assert.equal(said.length, 21);
    assert.equal(said[20], 'more than 1000 more unknown fields were ignored, in 3000 rows');
  });

  it('and the import of them through the API succeeds: 3,000 rows, 2.4 million names', LARGE_DATA, async () => {
    const res = await importStream(distinctNames(3000, 800, 10_000));
    assert.equal(res.statusCode, 200, res.payload);
    assert.deepEqual(res.json(), { created: 3000, replaced: 0 });
    assert.equal(warnings(res).at(-1), '299 - "more than 1000 more unknown fields were ignored, in 3000 rows"');
  });
});
