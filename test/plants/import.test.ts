import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertError, testApp, TOKEN, type TestApp } from '../helpers.js';
import { LARGE_DATA } from '../tier.js';

const NDJSON = { 'content-type': 'application/x-ndjson' };

async function importBody(t: TestApp, body: string | Buffer, options: { type?: string; query?: string; token?: string } = {}) {
  return t.app.inject({
    method: 'POST',
    url: `/plants/import${options.query ?? ''}`,
    headers: { authorization: `Bearer ${options.token ?? TOKEN}`, 'content-type': options.type ?? NDJSON['content-type'] },
    payload: body,
  });
}

async function count(t: TestApp): Promise<number> {
  return t.store.plants.count();
}

describe('POST /plants/import: many plants at once, all or nothing', () => {
  it('NDJSON: one NewPlant per line (LF or CRLF, blank lines skipped); 200 with created and replaced', async () => {
    const t = await testApp(after);
    await t.call('POST', '/plants', { body: { id: 2, name: 'old two' } });
    const res = await importBody(
      t,
      '{"id":1,"name":"one","tag":"a"}\r\n\n{"id":2,"name":"two"}\n{"id":9223372036854775807,"name":"max"}\n  \n{"id":-9223372036854775808,"name":"min"}',
    );
    assert.equal(res.statusCode, 200, res.payload);
    assert.deepEqual(res.json(), { created: 3, replaced: 1 });
    assert.deepEqual((await t.call('GET', '/plants/2')).json(), { id: 2, name: 'two' });
    assert.equal((await t.call('GET', '/plants/9223372036854775807')).payload, '{"id":9223372036854775807,"name":"max"}');
    assert.equal((await t.call('GET', '/plants/-9223372036854775808')).payload, '{"id":-9223372036854775808,"name":"min"}');
  });

  it('a JSON array of NewPlants, with strings that hold brackets, braces, commas and escaped quotes', async () => {
    const t = await testApp(after);
    const plants = [
      { id: 1, name: 'a]b', tag: '{"x":[1,2]}' },
      { id: 2, name: 'quote \\" and \\\\ backslash' },
      { id: 3, name: ',,,', tag: ']' },
    ];
    const body = ` [\n ${plants.map((p) => JSON.stringify(p)).join(' ,\n')} ] \n`;
    const res = await importBody(t, body, { type: 'application/json; charset=utf-8' });
    assert.equal(res.statusCode, 200, res.payload);
    assert.deepEqual(res.json(), { created: 3, replaced: 0 });
    for (const p of plants) assert.deepEqual((await t.call('GET', `/plants/${p.id}`)).json(), p);
    assert.deepEqual((await importBody(t, '[]', { type: 'application/json' })).json(), { created: 0, replaced: 0 });
  });

  it('a repeated id: the last row wins; created and replaced count distinct ids', async () => {
    const t = await testApp(after);
    await t.call('POST', '/plants', { body: { id: 5, name: 'stored' } });
    const res = await importBody(
      t,
      ['{"id":5,"name":"first"}', '{"id":6,"name":"a"}', '{"id":5,"name":"last"}', '{"id":6,"name":"b","tag":"won"}'].join('\n'),
    );
    assert.deepEqual(res.json(), { created: 1, replaced: 1 });
    assert.deepEqual((await t.call('GET', '/plants/5')).json(), { id: 5, name: 'last' });
    assert.deepEqual((await t.call('GET', '/plants/6')).json(), { id: 6, name: 'b', tag: 'won' });
  });

  it(
    'the first bad line answers 400 naming its line (1-based) and field, and nothing is stored, even when it is the last of 100,000',
    LARGE_DATA,
    async () => {
      const t = await testApp(after);
      const lines: string[] = [];
      for (let i = 1; i < 100_000; i++) lines.push(`{"id":${i},"name":"plant ${i}"}`);
      lines.push('{"id":100000,"name":""}');
      const message = assertError(await importBody(t, lines.join('\n')), 400, 'line 100000');
      assert.match(message, /name/);
      assert.equal(await count(t), 0, 'nothing stored');
    },
  );

  describe('400 for every kind of bad row, naming where, nothing stored', () => {
    const cases: Array<[string, string, string, RegExp]> = [
      ['a missing name', '{"id":1,"name":"ok"}\n{"id":2}', 'line 2', /name is required/],
      ['a string id', '{"id":"3","name":"x"}', 'line 1', /id must be an integer/],
      ['an id beyond int64', '{"id":9223372036854775808,"name":"x"}', 'line 1', /id must be an integer/],
      ['a tag too long', `{"id":1,"name":"x","tag":"${'t'.repeat(65)}"}`, 'line 1', /tag/],
      ['a null tag', '{"id":1,"name":"x","tag":null}', 'line 1', /tag/],
      ['not JSON', '{"id":1,"name":"x"}\n{"id":2,', 'line 2', /JSON/],
      ['not an object', '[1,2]', 'line 1', /object/],
      ['a lone surrogate', '{"id":1,"name":"\\ud800"}', 'line 1', /surrogate/],
    ];
    for (const [what, body, where, why] of cases) {
      it(what, async () => {
        const t = await testApp(after);
        const message = assertError(await importBody(t, body), 400, where);
        assert.match(message, why);
        assert.equal(await count(t), 0);
      });
    }
    const arrays: Array<[string, string, RegExp]> = [
      ['an element without a name (0-based index)', '[{"id":1,"name":"a"},{"id":2}]', /element 1: name is required/],
      ['not an array', '{"id":1,"name":"a"}', /JSON array/],
      ['an unclosed array', '[{"id":1,"name":"a"}', /not closed/],
      ['a trailing comma', '[{"id":1,"name":"a"},]', /element 1/],
      ['text after the array', '[{"id":1,"name":"a"}] x', /after the end/],
      ['an element that is not an object', '[{"id":1,"name":"a"}, 5]', /element 1/],
      ['an empty body', '', /empty/],
    ];
    for (const [what, body, why] of arrays) {
      it(`JSON array: ${what}`, async () => {
        const t = await testApp(after);
        assert.match(assertError(await importBody(t, body, { type: 'application/json' }), 400), why);
        assert.equal(await count(t), 0);
      });
    }
    it('bytes that are not UTF-8', async () => {
      const t = await testApp(after);
      assertError(await importBody(t, Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])), 400, 'UTF-8');
    });
  });

  it('mode=create-only refuses with 409 when any id exists, storing nothing; it refuses only ids already stored', async () => {
    const t = await testApp(after);
    await t.call('POST', '/plants', { body: { id: 3, name: 'stored' } });
    const message = assertError(await importBody(t, '{"id":1,"name":"a"}\n{"id":3,"name":"b"}', { query: '?mode=create-only' }), 409, 'id 3');
    assert.match(message, /nothing was imported/);
    assert.equal(await count(t), 1);
    const res = await importBody(t, '{"id":1,"name":"a"}\n{"id":1,"name":"again"}', { query: '?mode=create-only' });
    assert.deepEqual(res.json(), { created: 1, replaced: 0 }, 'a repeat within the import is not a conflict');
    assert.deepEqual((await importBody(t, '{"id":7,"name":"a"}', { query: '?mode=replace' })).json(), { created: 1, replaced: 0 });
    assertError(await importBody(t, '{"id":8,"name":"a"}', { query: '?mode=merge' }), 400, 'querystring.mode');
  });

  it('415 for another media type; 413 past IMPORT_BODY_LIMIT, nothing stored; needs plants:write', async () => {
    const t = await testApp(after, { config: { importBodyLimit: 4096 } });
    assertError(await importBody(t, '{"id":1,"name":"a"}', { type: 'text/plain' }), 415);
    const big = Array.from({ length: 200 }, (_, i) => `{"id":${i},"name":"plant number ${i}"}`).join('\n');
    assertError(await importBody(t, big), 413, 'IMPORT_BODY_LIMIT');
    assert.equal(await count(t), 0);
    const reader = await t.tokenWith('plants:read');
    assertError(await importBody(t, '{"id":1,"name":"a"}', { token: reader }), 403, 'plants:write');
  });

  it('the import is larger than BODY_LIMIT (64 KiB) and still accepted: it is streamed', LARGE_DATA, async () => {
    const t = await testApp(after);
    const rows = Array.from({ length: 20_000 }, (_, i) => `{"id":${i},"name":"plant number ${i}","tag":"bulk"}`).join('\n');
    assert.ok(rows.length > 64 * 1024 * 10);
    assert.deepEqual((await importBody(t, rows)).json(), { created: 20_000, replaced: 0 });
    assert.equal((await t.call('GET', '/plants?tag=bulk', { headers: { prefer: 'count=exact' } })).headers['x-total-count'], '20000');
  });

  it('each imported plant gets a new version (ETag)', async () => {
    const t = await testApp(after);
    const before = await t.call('PUT', '/plants/1', { body: { name: 'a' } });
    await importBody(t, '{"id":1,"name":"a"}\n{"id":2,"name":"b"}');
    const after1 = await t.call('GET', '/plants/1');
    assert.notEqual(after1.headers.etag, before.headers.etag);
    assert.equal((await t.call('GET', '/plants/1', { headers: { 'if-none-match': String(before.headers.etag) } })).statusCode, 200);
  });

  it('is documented: the three media types, the mode, 409 and 413', async () => {
    const t = await testApp(after);
    const op = (await t.call('GET', '/openapi.json', { token: null })).json().paths['/plants/import'].post;
    assert.deepEqual(Object.keys(op.requestBody.content).sort(), ['application/json', 'application/x-ndjson', 'text/csv']);
    assert.ok(op.parameters.some((p: { name: string }) => p.name === 'mode'));
    for (const status of ['200', '400', '409', '413', '415']) assert.ok(op.responses[status], status);
  });
});
