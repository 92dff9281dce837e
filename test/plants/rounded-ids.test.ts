import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertError, testApp } from '../helpers.js';

/**
 * An id that is not an integer is refused wherever an id is written, even when a double would round it to
 * one: `41.99999999999999999` once replaced plant 42, `1e-400` plant 0, as `1.5` never could. `1.0` and
 * `1e3`, the same JSON numbers as 1 and 1000, are still taken.
 */
describe('ids that a double would round to an integer', async () => {
  const t = await testApp(after);
  await t.call('POST', '/plants', { body: { id: 42, name: 'Original' } });
  await t.call('POST', '/plants', { body: { id: 0, name: 'Zero' } });
  const unchanged = async () => {
    assert.equal((await t.call('GET', '/plants/42')).json<{ name: string }>().name, 'Original');
    assert.equal((await t.call('GET', '/plants/0')).json<{ name: string }>().name, 'Zero');
  };

  for (const id of ['41.99999999999999999', '1e-400', '9007199254740990.5', '42.000000000000001']) {
    it(`POST, PUT and PATCH with id ${id}: 400 naming body.id, nothing written`, async () => {
      for (const [method, url] of [
        ['POST', '/plants'],
        ['PUT', '/plants/42'],
        ['PATCH', '/plants/42'],
      ] as const) {
        const type = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
        const res = await t.call(method, url, { headers: { 'content-type': type }, body: `{"id":${id},"name":"Overwritten"}` });
        assertError(res, 400, `body.id must be an integer: ${id} is not one, though a double would round it to`, 'validation_failed');
        assert.equal(res.json<{ field: string }>().field, 'body.id');
      }
      await unchanged();
    });

    it(`an NDJSON import with id ${id}: 400 naming the line, nothing stored`, async () => {
      const res = await t.call('POST', '/plants/import', {
        headers: { 'content-type': 'application/x-ndjson' },
        body: `{"id":7,"name":"fine"}\n{"id":${id},"name":"Overwritten"}\n`,
      });
      assertError(res, 400, `line 2: id must be an integer: ${id} is not one`, 'invalid_import');
      assert.equal((await t.call('GET', '/plants/7')).statusCode, 404);
      await unchanged();
    });
  }

  it('takes 1.0, 1e3 and 100e-2 as the integers they are', async () => {
    for (const [text, id] of [
      ['1.0', 1],
      ['1e3', 1000],
      ['100e-2', 1],
    ] as const) {
      const res = await t.call('POST', '/plants', { body: `{"id":${text},"name":"Exact"}` });
      assert.equal(res.statusCode, 200, res.payload);
      assert.equal((await t.call('GET', `/plants/${id}`)).statusCode, 200);
    }
  });

  it('a name holding such text is a name', async () => {
    const res = await t.call('POST', '/plants', { body: { id: 5, name: 'Batch 41.99999999999999999 of 1e-400' } });
    assert.equal(res.statusCode, 200, res.payload);
  });
});
