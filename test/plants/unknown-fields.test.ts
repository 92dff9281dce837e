import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertError, testApp } from '../helpers.js';
import { ignored, warnings } from './warnings.js';

/**
 * Body fields a write does not know (http/unknown-fields.ts): ignored and said in a Warning header, or
 * refused with Prefer: handling=strict or UNKNOWN_FIELDS=refuse (the Warning of a POST that replaced a plant, and
 * the near-misses: write-warnings.test.ts).
 */

describe('unknown body fields', async () => {
  const t = await testApp(after);
  let nextId = 81_000;
  const freshId = () => nextId++;
  const STRICT = { prefer: 'handling=strict' };

  it('POST: a typo is stored without it, answered 200 as the specification says, and said in a Warning', async () => {
    const id = freshId();
    const res = await t.call('POST', '/plants', { body: { id, name: 'Typo tag', tga: 'tropical' } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.payload, '{"name":"Typo tag"}');
    assert.deepEqual(warnings(res), [ignored('tga', 'tag')]);
    assert.equal(res.headers['preference-applied'], undefined, 'nothing was asked for');
    assert.equal((await t.call('GET', `/plants/${id}`)).payload, `{"id":${id},"name":"Typo tag"}`);
  });

  it('one Warning per unknown field, in the order sent; none when every field is known', async () => {
    const res = await t.call('POST', '/plants', { body: { colour: 'green', id: freshId(), name: 'Cactus', nested: { tag: 'x' }, extra: null } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(warnings(res), [ignored('colour'), ignored('nested'), ignored('extra')]);
    const clean = await t.call('POST', '/plants', { body: { id: freshId(), name: 'Fern', tag: 'shade' } });
    assert.deepEqual(warnings(clean), []);
  });

  it('Prefer: handling=strict refuses them all, 400 naming each, nothing written, Preference-Applied', async () => {
    const id = freshId();
    const res = await t.call('POST', '/plants', { body: { id, name: 'Typo tag', tga: 'tropical', colour: 'red' }, headers: STRICT });
    assertError(res, 400, 'body has unknown fields "tga" (did you mean "tag"?) and "colour"');
    assert.equal(res.headers['preference-applied'], 'handling=strict');
    assert.deepEqual(warnings(res), []);
    assertError(await t.call('GET', `/plants/${id}`), 404);
    const one = await t.call('POST', '/plants', { body: { id, name: 'Typo tag', tga: 'tropical' }, headers: STRICT });
    assertError(one, 400, 'body has an unknown field "tga": did you mean "tag"?');
  });

  it('strict and valid: written, 200, Preference-Applied: handling=strict', async () => {
    const id = freshId();
    const res = await t.call('POST', '/plants', { body: { id, name: 'Aloe' }, headers: STRICT });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['preference-applied'], 'handling=strict');
    assert.equal((await t.call('GET', `/plants/${id}`)).statusCode, 200);
  });

  it('strict with other problems too: every problem in one 400', async () => {
    const res = await t.call('POST', '/plants', { body: { id: '2', name: '', tga: 1 }, headers: STRICT });
    const message = assertError(res, 400);
    assert.match(message, /body\.name must not be empty/);
    assert.match(message, /body\.id must be an integer/);
    assert.match(message, /body has an unknown field "tga"/);
    assert.equal(res.headers['preference-applied'], 'handling=strict');
    // Lenient: the validation problems alone, the unknown field not among them.
    assert.doesNotMatch(assertError(await t.call('POST', '/plants', { body: { id: '2', name: '', tga: 1 } }), 400), /tga/);
  });

  it('reads Prefer as RFC 7240 has it: with other preferences, quoted, any case, repeated (the first counts)', async () => {
    for (const prefer of [
      'count=exact, handling=strict',
      'handling="strict"',
      'HANDLING=STRICT',
      'handling=strict; x=1',
      'handling=strict, handling=lenient',
    ]) {
      const res = await t.call('POST', '/plants', { body: { id: freshId(), name: 'x', tga: 1 }, headers: { prefer } });
      assertError(res, 400, 'unknown field "tga"');
    }
    for (const prefer of ['handling=other', 'handling', 'return=minimal', '']) {
      const res = await t.call('POST', '/plants', { body: { id: freshId(), name: 'x', tga: 1 }, headers: { prefer } });
      assert.equal(res.statusCode, 200, prefer);
      // A handling it does not know is said not to be understood (the default applied); other preferences are none of its business.
      const misread = prefer.startsWith('handling') ? warnings(res).slice(0, 1) : [];
      assert.deepEqual(warnings(res), [...misread, ignored('tga', 'tag')]);
      for (const text of misread)
        assert.match(
          text,
          /^299 - "Prefer: handling=(other)? was not understood \(handling is strict or lenient\); handled as lenient, the service's default"$/,
        );
      assert.equal(res.headers['preference-applied'], undefined, 'a preference it does not apply is not said to be applied');
    }
  });

  it('PUT and PATCH say and refuse alike, changing nothing when refused', async () => {
    const id = freshId();
    const put = await t.call('PUT', `/plants/${id}`, { body: { name: 'Pilea', colour: 'green' } });
    assert.equal(put.statusCode, 201);
    assert.deepEqual(warnings(put), [ignored('colour')]);
    const patch = await t.call('PATCH', `/plants/${id}`, { body: { nmae: 'Pilea peperomioides' } });
    assert.equal(patch.statusCode, 200);
    assert.deepEqual(warnings(patch), [ignored('nmae', 'name')]);
    assertError(await t.call('PUT', `/plants/${id}`, { body: { name: 'Other', colour: 'red' }, headers: STRICT }), 400, '"colour"');
    assertError(await t.call('PATCH', `/plants/${id}`, { body: { nmae: 'Other' }, headers: STRICT }), 400, '"nmae"');
    assert.equal((await t.call('GET', `/plants/${id}`)).payload, `{"id":${id},"name":"Pilea"}`);
  });

  it("a field's name of any characters is told in a header that stays ASCII", async () => {
    const res = await t.call('POST', '/plants', { body: { id: freshId(), name: 'x', 'a"b\\c': 1, 'ñ\u0007🌵': 2 } });
    assert.equal(res.statusCode, 200);
    const [quotes, unicode] = warnings(res);
    assert.equal(quotes, '299 - "unknown field \\"a\\\\\\"b\\\\\\\\c\\" was ignored"');
    assert.match(unicode!, /^[\x20-\x7e]+$/);
    assert.equal(unicode, '299 - "unknown field \\"\\\\u00f1\\\\u0007\\\\ud83c\\\\udf35\\" was ignored"');
  });

  it('cuts a long name at 60 characters, never between the halves of a surrogate pair', async () => {
    // 59 letters, then U+1F335 (two UTF-16 units): a cut at 60 units would keep its first half alone.
    const name = `${'a'.repeat(59)}\u{1F335}more`;
    const res = await t.call('POST', '/plants', { body: { id: freshId(), name: 'x', [name]: 1 } });
    assert.deepEqual(warnings(res), [`299 - "unknown field \\"${'a'.repeat(59)}\\\\ud83c\\\\udf35\\\\u2026\\" was ignored"`]);
    const refused = assertError(await t.call('POST', '/plants', { body: { id: freshId(), name: 'x', [name]: 1 }, headers: STRICT }), 400);
    assert.equal(refused, `body has an unknown field "${'a'.repeat(59)}\u{1F335}\u2026"`);
    // Astral characters count one each: 60 of them are shown whole, the 61st cut.
    const cacti = '\u{1F335}'.repeat(61);
    const many = assertError(await t.call('POST', '/plants', { body: { id: freshId(), name: 'x', [cacti]: 1 }, headers: STRICT }), 400);
    assert.equal(many, `body has an unknown field "${'\u{1F335}'.repeat(60)}\u2026"`);
    assert.doesNotMatch(many, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/, 'no lone high surrogate');
  });

  it('at most 20 Warnings for unknown fields, the rest counted in one more', async () => {
    const body: Record<string, unknown> = { id: freshId(), name: 'many' };
    for (let i = 0; i < 25; i++) body[`f${i}`] = i;
    const res = await t.call('POST', '/plants', { body });
    assert.equal(warnings(res).length, 21);
    assert.equal(warnings(res)[20], '299 - "5 more unknown fields were ignored"');
    const strict = assertError(await t.call('POST', '/plants', { body, headers: STRICT }), 400);
    assert.match(strict, /"f0", .*"f19" and 5 more$/);
  });

  it('the webhook writes with a body say and refuse alike', async () => {
    const created = await t.call('POST', '/webhooks', { body: { url: 'https://93.184.215.14/hook', evnets: ['plant.created'] } });
    assert.equal(created.statusCode, 201);
    assert.deepEqual(warnings(created), [ignored('evnets', 'events')]);
    const id = created.json<{ id: string }>().id;
    assertError(await t.call('POST', '/webhooks', { body: { url: 'https://93.184.215.14/hook', evnets: [] }, headers: STRICT }), 400, '"evnets"');
    const patched = await t.call('PATCH', `/webhooks/${id}`, { body: { enabeld: false } });
    assert.equal(patched.statusCode, 200);
    assert.deepEqual(warnings(patched), [ignored('enabeld', 'enabled')]);
    const replay = await t.call('POST', `/webhooks/${id}/replay`, { body: { since: '2020-01-01T00:00:00Z', untill: 'x' }, headers: STRICT });
    assertError(replay, 400, '"untill"');
  });
});

describe('UNKNOWN_FIELDS=refuse', async () => {
  const t = await testApp(after, { config: { unknownFields: 'refuse' } });

  it('refuses unknown fields by default, 400 without a Preference-Applied (nothing was asked)', async () => {
    const res = await t.call('POST', '/plants', { body: { id: 1, name: 'x', tga: 1 } });
    assertError(res, 400, 'body has an unknown field "tga"');
    assert.equal(res.headers['preference-applied'], undefined);
    assertError(await t.call('GET', '/plants/1'), 404);
  });

  it('Prefer: handling=lenient sets it aside for one request: written, said, Preference-Applied: handling=lenient', async () => {
    const res = await t.call('POST', '/plants', { body: { id: 2, name: 'x', tga: 1 }, headers: { prefer: 'handling=lenient' } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(warnings(res), [ignored('tga', 'tag')]);
    assert.equal(res.headers['preference-applied'], 'handling=lenient');
  });

  it('imports too', async () => {
    const res = await t.call('POST', '/plants/import', {
      body: '{"id":3,"name":"a","tga":1}\n',
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assertError(res, 400, 'line 1: the row has an unknown field "tga"');
  });
});

describe('unknown fields of an import', async () => {
  const t = await testApp(after);
  const ndjson = (text: string, headers: Record<string, string> = {}) =>
    t.call('POST', '/plants/import', { body: text, headers: { 'content-type': 'application/x-ndjson', ...headers } });

  it('counted in one Warning per field, with the rows it was in', async () => {
    const res = await ndjson(
      '{"id":1,"name":"a","tga":"x"}\n{"id":2,"name":"b","tga":"y","colour":1}\n{"id":3,"name":"c"}\n{"id":4,"name":"d","tga":"z"}\n',
    );
    assert.equal(res.statusCode, 200);
    assert.equal(res.payload, '{"created":4,"replaced":0}');
    assert.deepEqual(warnings(res), [
      '299 - "unknown field \\"tga\\" was ignored in 3 rows: did you mean \\"tag\\"?"',
      '299 - "unknown field \\"colour\\" was ignored in 1 row"',
    ]);
  });

  it('a JSON array alike; a CSV names its columns in its header, and has no such field', async () => {
    const json = await t.call('POST', '/plants/import', { body: '[{"id":5,"name":"e","tga":1}]' });
    assert.deepEqual(warnings(json), ['299 - "unknown field \\"tga\\" was ignored in 1 row: did you mean \\"tag\\"?"']);
    const csv = await t.call('POST', '/plants/import', { body: 'id,name\r\n6,f\r\n', headers: { 'content-type': 'text/csv' } });
    assert.equal(csv.statusCode, 200);
    assert.deepEqual(warnings(csv), []);
  });

  it('a replay of a keyed import carries the same Warnings, its rows read through again', async () => {
    const body = '{"id":50,"name":"a","tga":"x"}\n{"id":51,"name":"b","tga":"y"}\n';
    const first = await ndjson(body, { 'idempotency-key': 'import-warnings' });
    const replay = await ndjson(body, { 'idempotency-key': 'import-warnings' });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(warnings(first), ['299 - "unknown field \\"tga\\" was ignored in 2 rows: did you mean \\"tag\\"?"']);
    assert.deepEqual(warnings(replay), warnings(first));
    assert.equal(replay.payload, first.payload);
    const other = await ndjson('not json at all\n', { 'idempotency-key': 'import-warnings' });
    assertError(other, 422, 'import-warnings');
  });

  it('strict: the first row with one is refused, naming its line and fields, and nothing is stored', async () => {
    const res = await ndjson('{"id":70,"name":"a"}\n{"id":71,"name":"b","tga":"y","colour":1}\n', { prefer: 'handling=strict' });
    assertError(res, 400, 'line 2: the row has unknown fields "tga" (did you mean "tag"?) and "colour"');
    assert.equal(res.headers['preference-applied'], 'handling=strict');
    assertError(await t.call('GET', '/plants/70'), 404);
  });
});
