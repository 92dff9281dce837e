import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { csvColumns, csvId, fromCsvCell } from '../../src/plants/csv-cells.js';
import { csvRecords } from '../../src/plants/csv.js';
import { CSV_HEADER, csvLine } from '../../src/plants/export.js';
import { STORABLE_TEXT } from '../../src/model/plant.js';
import type { StoredPlant } from '../../src/model/plant.js';
import { assertError, testApp, TOKEN, type TestApp } from '../helpers.js';
import { FUZZING } from '../tier.js';

/** CSV imports: what exports write comes back as the same plants, all or nothing, errors naming the line. */

function importCsv(t: TestApp, body: string, type = 'text/csv') {
  return t.app.inject({
    method: 'POST',
    url: '/plants/import',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': type },
    payload: body,
  });
}

async function ndjsonExport(t: TestApp): Promise<string> {
  return (await t.call('GET', '/plants?format=ndjson')).payload;
}

/** Names an export must carry through CSV and back: quoting, line breaks, formula starts, quotes before them, non-ASCII. */
const TRICKY: StoredPlant[] = [
  { id: 1, name: 'plain', tag: 'green' },
  { id: 2, name: 'comma, inside', tag: 'a,b' },
  { id: 3, name: 'a "quoted" word', tag: '""' },
  { id: 4, name: 'line\nbreak and\r\nCRLF and a lone\rCR' },
  { id: 5, name: '=SUM(A1:A9)', tag: '+danger' },
  { id: 6, name: '-minus', tag: '@at' },
  { id: 7, name: '\ttab first', tag: '\rcr first' },
  { id: 8, name: "'=already quoted", tag: "''+twice" },
  { id: 9, name: "'plain quote", tag: "'" },
  { id: 10, name: 'ünïcødé 🌿 日本語', tag: 'naïve' },
  { id: 11, name: '=1,"2"\n@3' },
  { id: 12, name: ' spaces around ', tag: ' ' },
  { id: 9007199254740993n, name: 'beyond 2^53' },
  { id: 9223372036854775807n, name: 'max', tag: 'edge' },
  { id: -9223372036854775808n, name: 'min', tag: 'edge' },
  { id: -1, name: 'negative' },
];

describe('POST /plants/import with text/csv', () => {
  it('takes back what CSV export wrote: the same plants, exactly, ids beyond 2^53 included', async () => {
    const source = await testApp(after);
    for (const plant of TRICKY) {
      const res = await source.call('PUT', `/plants/${plant.id}`, {
        body: `{"name":${JSON.stringify(plant.name)}${plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`}}`,
      });
      assert.ok(res.statusCode < 300, res.payload);
    }
    const csv = (await source.call('GET', '/plants?format=csv')).payload;
    const target = await testApp(after);
    const res = await importCsv(target, csv);
    assert.equal(res.statusCode, 200, res.payload);
    assert.deepEqual(res.json(), { created: TRICKY.length, replaced: 0 });
    assert.equal(await ndjsonExport(target), await ndjsonExport(source));
  });

  it('reads LF or CRLF, a byte order mark, the columns in any order, no tag column, a charset parameter', async () => {
    const t = await testApp(after);
    const body = '\ufeffname,id\n"Fern, the first",1\r\nMoss,2\n\n';
    const res = await importCsv(t, body, 'text/csv; charset=utf-8');
    assert.equal(res.statusCode, 200, res.payload);
    assert.deepEqual(res.json(), { created: 2, replaced: 0 });
    assert.equal(await ndjsonExport(t), '{"id":1,"name":"Fern, the first"}\n{"id":2,"name":"Moss"}\n');
  });

  it('an empty tag cell is no tag (CSV cannot tell an empty tag from none); a header alone imports nothing', async () => {
    const t = await testApp(after);
    assert.deepEqual((await importCsv(t, 'id,name,tag\r\n1,a,\r\n')).json(), { created: 1, replaced: 0 });
    assert.equal(await ndjsonExport(t), '{"id":1,"name":"a"}\n');
    assert.deepEqual((await importCsv(t, 'id,name,tag\r\n')).json(), { created: 0, replaced: 0 });
  });

  describe('400 naming the line, nothing stored', () => {
    const cases: Array<[string, string, string]> = [
      ['a header that is not id,name,tag', 'plant,name\r\n1,a\r\n', 'line 1: the header must name the columns id, name and tag'],
      ['a header without name', 'id,tag\r\n1,a\r\n', 'line 1: the header must name'],
      ['a repeated column', 'id,name,name\r\n1,a,b\r\n', 'line 1: the header must name'],
      ['too few fields', 'id,name,tag\r\n1,a,t\r\n2,b\r\n', 'line 3: has 2 fields, where the header has 3'],
      ['too many fields', 'id,name,tag\r\n1,a,t,x\r\n', 'line 2: has 4 fields, where the header has 3'],
      ['an id that is not a number', 'id,name,tag\r\n1,a,\r\nx,b,\r\n', 'line 3: id must be an integer'],
      [
        'an id beyond int64',
        'id,name,tag\r\n9223372036854775808,b,\r\n',
        'line 2: id must be an integer from -9223372036854775808 to 9223372036854775807',
      ],
      ['an id with a fraction', 'id,name,tag\r\n1.5,b,\r\n', 'line 2: id must be an integer'],
      // Spellings a path refuses (`-0` once replaced plant 0, `007` wrote plant 7).
      ['an id -0', 'id,name,tag\r\n-0,b,\r\n', 'line 2: id must be an integer'],
      ['an id with a leading zero', 'id,name,tag\r\n007,b,\r\n', 'line 2: id must be an integer'],
      ['an id of zeros', 'id,name,tag\r\n00,b,\r\n', 'line 2: id must be an integer'],
      ['an id with a plus sign', 'id,name,tag\r\n+7,b,\r\n', 'line 2: id must be an integer'],
      [
        'an empty name and a long tag',
        `id,name,tag\r\n1,,${'t'.repeat(65)}\r\n`,
        'line 2: name must not be empty; tag must be at most 64 characters long',
      ],
      ['a quote inside an unquoted field', 'id,name,tag\r\n1,a"b,\r\n', 'line 2: a quote inside a field that does not start with one'],
      ['text after a closing quote', 'id,name,tag\r\n1,"a"b,\r\n', 'line 2: text after the closing quote'],
      [
        'a quoted field never closed (named by the line it starts on)',
        'id,name,tag\r\n1,a,\r\n2,"open\r\nstill,\r\n',
        'line 3: a quoted field is not closed',
      ],
      ['a line after a multi-line field is counted right', 'id,name,tag\r\n1,"two\r\nlines",\r\n2,,\r\n', 'line 4: name must not be empty'],
      ['a lone carriage return', 'id,name,tag\r\n1,a,\rb\r\n', 'line 2: a carriage return outside quotes'],
      ['bytes that are not UTF-8', 'id,name,tag\r\n1,\xff,\r\n', 'not valid UTF-8'],
    ];
    for (const [what, body, message] of cases) {
      it(what, async () => {
        const t = await testApp(after);
        const payload = what.startsWith('bytes') ? Buffer.from(body, 'latin1') : body;
        const res = await t.app.inject({
          method: 'POST',
          url: '/plants/import',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/csv' },
          payload,
        });
        assertError(res, 400, message);
        assert.equal(await t.store.plants.count(), 0);
      });
    }
  });

  it('a record longer than IMPORT_MAX_ROW_BYTES is refused, naming its line', async () => {
    const t = await testApp(after, { config: { importMaxRowBytes: 1024 } });
    assertError(await importCsv(t, `id,name,tag\r\n1,a,\r\n2,"${'x\n'.repeat(600)}",\r\n`), 400, 'line 3: longer than the limit of 1024 bytes');
    assert.equal(await t.store.plants.count(), 0);
  });

  it('415 names every media type an import takes', async () => {
    const t = await testApp(after);
    assertError(
      await importCsv(t, 'id,name\r\n1,a\r\n', 'text/plain'),
      415,
      'unsupported media type "text/plain": send the body as application/x-ndjson, application/json or text/csv',
    );
    // No body and no Content-Type: no stream reaches the route (once a 500), the same 415.
    for (const headers of [{}, { 'content-length': '0' }] as Array<Record<string, string>>) {
      const none = await t.call('POST', '/plants/import', { headers });
      assertError(
        none,
        415,
        'unsupported media type "(none)": send the body as application/x-ndjson, application/json or text/csv',
        'unsupported_media_type',
      );
    }
    assert.equal(await t.store.plants.count(), 0);
  });
});

/** The storable text of names and tags: no U+0000, no unpaired surrogate. */
const storable = (max: number) =>
  fc
    .string({
      unit: fc.oneof(
        fc.constantFrom('=', '+', '-', '@', '\t', '\r', '\n', "'", '"', ',', ' '),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
      ),
      maxLength: max,
    })
    .filter((text) => new RegExp(STORABLE_TEXT, 'u').test(text));

describe('csvRecords: whatever the pieces the text arrives in', () => {
  it('gives back the plants csvLine wrote (property)', FUZZING, async () => {
    const plant = fc.record({
      id: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
      name: storable(20).filter((name) => name.length > 0),
      tag: fc.option(
        storable(10).filter((tag) => tag !== ''),
        { nil: undefined },
      ),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(plant, { maxLength: 20 }), fc.array(fc.nat(40), { maxLength: 10 }), async (plants, cuts) => {
        const text = CSV_HEADER + plants.map((p) => csvLine(p.tag === undefined ? { id: p.id, name: p.name } : (p as StoredPlant))).join('');
        // The text cut at arbitrary places, as a network would deliver it.
        const pieces: string[] = [];
        let at = 0;
        for (const cut of cuts) {
          pieces.push(text.slice(at, at + cut));
          at += cut;
        }
        pieces.push(text.slice(at));
        const records: string[][] = [];
        for await (const { fields } of csvRecords(
          (async function* () {
            yield* pieces;
          })(),
          1 << 20,
        ))
          records.push(fields);
        const [header, ...rows] = records;
        const columns = csvColumns(header!, 1);
        const read = rows.map((fields) => ({
          id: BigInt(csvId(fields[columns.id]!)),
          name: fromCsvCell(fields[columns.name]!),
          tag: fromCsvCell(fields[columns.tag!]!) || undefined,
        }));
        assert.deepEqual(
          read,
          plants.map((p) => ({ id: p.id, name: p.name, tag: p.tag })),
        );
      }),
      { numRuns: 300 },
    );
  });
});
