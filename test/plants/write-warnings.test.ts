import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertError, testApp } from '../helpers.js';
import { ignored, warnings } from './warnings.js';

/**
 * The Warnings of writes beside unknown fields (unknown-fields.test.ts): a POST that replaced a plant,
 * and the near-misses a 400 or a Warning names (a typo of a field, a path, a preference).
 */

describe('a POST that replaced a plant', async () => {
  const t = await testApp(after);

  it('says so in a Warning; a create does not', async () => {
    const created = await t.call('POST', '/plants', { body: { id: 1, name: 'Monstera', tag: 'tropical' } });
    assert.equal(created.statusCode, 200);
    assert.deepEqual(warnings(created), []);
    const replaced = await t.call('POST', '/plants', { body: { id: 1, name: 'Monstera deliciosa' } });
    assert.equal(replaced.statusCode, 200);
    assert.equal(replaced.payload, '{"name":"Monstera deliciosa"}');
    assert.deepEqual(warnings(replaced), ['299 - "replaced the stored plant 1"']);
  });

  it('a replay of a keyed POST that replaced a plant says so again, the same bytes', async () => {
    const headers = { 'idempotency-key': 'replaced-key' };
    const first = await t.call('POST', '/plants', { body: { id: 1, name: 'keyed', tga: 'x' }, headers });
    const replay = await t.call('POST', '/plants', { body: { id: 1, name: 'keyed', tga: 'x' }, headers });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(warnings(first), [ignored('tga', 'tag'), '299 - "replaced the stored plant 1"']);
    assert.deepEqual(warnings(replay), warnings(first));
  });

  it('a strict retry of a lenient keyed POST is refused before its key is looked at (400); the lenient retry still replays', async () => {
    const headers = { 'idempotency-key': 'lenient-then-strict' };
    const first = await t.call('POST', '/plants', { body: { id: 3, name: 'x', tga: 1 }, headers });
    assert.equal(first.statusCode, 200);
    const strict = await t.call('POST', '/plants', { body: { id: 3, name: 'x', tga: 1 }, headers: { ...headers, prefer: 'handling=strict' } });
    assertError(strict, 400, 'body has an unknown field "tga"');
    const again = await t.call('POST', '/plants', { body: { id: 3, name: 'x', tga: 1 }, headers });
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.payload, first.payload);
  });

  it('beside an unknown field’s, after it', async () => {
    const res = await t.call('POST', '/plants', { body: { id: 1, name: 'again', tga: 'x' } });
    assert.deepEqual(warnings(res), [ignored('tga', 'tag'), '299 - "replaced the stored plant 1"']);
  });

  it('names an int64 id exactly', async () => {
    await t.call('POST', '/plants', { body: '{"id":9223372036854775807,"name":"big"}' });
    const res = await t.call('POST', '/plants', { body: '{"id":9223372036854775807,"name":"bigger"}' });
    assert.deepEqual(warnings(res), ['299 - "replaced the stored plant 9223372036854775807"']);
  });

  it('If-None-Match: * only creates: 412 for an existing id, the plant unchanged', async () => {
    const res = await t.call('POST', '/plants', { body: { id: 1, name: 'never' }, headers: { 'if-none-match': '*' } });
    assertError(res, 412, 'already exists');
    assert.equal((await t.call('GET', '/plants/1')).json<{ name: string }>().name, 'again');
  });
});

/**
 * Near-misses named by default, not only under strict handling: a required field missing beside an unknown
 * field one edit from it (a letter added, dropped, changed, or two swapped), a path with a trailing slash,
 * a handling preference misspelt.
 */
describe('near-misses', async () => {
  const t = await testApp(after);

  it('a required field missing beside its typo: the 400 names both, lenient or strict', async () => {
    const lenient = await t.call('POST', '/plants', { body: { id: 3, nmae: 'Fern' } });
    assert.equal(assertError(lenient, 400), 'body.name is required: did you mean "name"? the body has "nmae"');
    const strict = assertError(await t.call('POST', '/plants', { body: { id: 3, nmae: 'Fern' }, headers: { prefer: 'handling=strict' } }), 400);
    assert.equal(strict, 'body.name is required: did you mean "name"? the body has "nmae"; body has an unknown field "nmae"');
    for (const typo of ['Name', 'nam', 'namee', 'nme', 'naem', 'mame']) {
      const message = assertError(await t.call('POST', '/plants', { body: { id: 3, [typo]: 'Fern' } }), 400);
      assert.equal(message, `body.name is required: did you mean "name"? the body has "${typo}"`, typo);
    }
    // Two edits away is no near-miss: the rule alone.
    assert.equal(assertError(await t.call('POST', '/plants', { body: { id: 3, nmea: 'Fern' } }), 400), 'body.name is required');
    assertError(await t.call('GET', '/plants/3'), 404);
  });

  it('an import row, a token, a webhook alike: the shared words', async () => {
    const row = await t.call('POST', '/plants/import', {
      body: '{"id":1,"name":"a"}\n{"id":2,"nmae":"b"}\n',
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(assertError(row, 400), 'line 2: name is required: did you mean "name"? the row has "nmae"');
    const token = assertError(await t.call('POST', '/tokens', { body: { name: 'x', scope: ['plants:read'] } }), 400);
    assert.equal(token, 'body.scopes is required: did you mean "scopes"? the body has "scope"');
    const hook = assertError(await t.call('POST', '/webhooks', { body: { ulr: 'https://93.184.215.14/hook' } }), 400);
    assert.equal(hook, 'body.url is required: did you mean "url"? the body has "ulr"');
  });

  it('a path with a trailing slash: did you mean the path without it', async () => {
    const posted = await t.call('POST', '/plants/', { body: { id: 4, name: 'Fern' } });
    assert.equal(assertError(posted, 405), 'method POST is not allowed on /plants/ (did you mean /plants?); allowed: GET, HEAD, PUT, PATCH, DELETE');
    assert.equal(assertError(await t.call('GET', '/plants/'), 400), 'params.id must be an integer (did you mean /plants?)');
    assert.equal(assertError(await t.call('GET', '/plants//'), 404), 'no such resource: GET /plants// (did you mean /plants?)');
    // No hint where the path without the slash takes no such request either.
    assert.equal(assertError(await t.call('GET', '/nothing/'), 404), 'no such resource: GET /nothing/');
    assert.equal(assertError(await t.call('GET', '/plants/x'), 400), 'params.id must be an integer');
  });

  it('a handling it does not know: the default applied, and said in a Warning, with the one meant', async () => {
    const res = await t.call('POST', '/plants', { body: { id: 5, name: 'x', tga: 1 }, headers: { prefer: 'handling=strickt' } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(warnings(res), [
      `299 - "Prefer: handling=strickt was not understood (did you mean handling=strict?); handled as lenient, the service's default"`,
      ignored('tga', 'tag'),
    ]);
    assert.equal(res.headers['preference-applied'], undefined);
    const lenient = await t.call('POST', '/plants', { body: { id: 6, name: 'x' }, headers: { prefer: 'count=exact, handling=lenint' } });
    assert.deepEqual(warnings(lenient), [
      `299 - "Prefer: handling=lenint was not understood (did you mean handling=lenient?); handled as lenient, the service's default"`,
    ]);
    const imported = await t.call('POST', '/plants/import', {
      body: '{"id":7,"name":"a"}\n',
      headers: { 'content-type': 'application/x-ndjson', prefer: 'handling=please' },
    });
    assert.deepEqual(warnings(imported), [
      `299 - "Prefer: handling=please was not understood (handling is strict or lenient); handled as lenient, the service's default"`,
    ]);
  });
});
