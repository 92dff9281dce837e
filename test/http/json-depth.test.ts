import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { parseJsonText as parseJson } from '../../src/http/json.js';
import { JSON_MAX_DEPTH, JsonDepthError } from '../../src/http/json-depth.js';
import { assertError, testApp, TOKEN } from '../helpers.js';

/** `levels` arrays nested inside one another: `[[[…]]]`. */
const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
/** A plant with an extra field nested so that the whole body is `levels` deep (the plant object is one). */
const plantBody = (id: string, levels: number) => `{"id":${id},"name":"Fern","extra":${nested(levels - 1)}}`;

const DEPTH_MESSAGE = `nested deeper than ${JSON_MAX_DEPTH} levels of arrays and objects`;
// A short id takes JSON.parse, a 16-digit one the exact int64 parser: both must judge alike.
const IDS = ['1', '9007199254740993'];

describe('JSON nested deeper than the limit', () => {
  it(`parsing refuses more than ${JSON_MAX_DEPTH} levels with one error on both paths, never a stack overflow`, () => {
    for (const id of IDS) {
      for (const levels of [JSON_MAX_DEPTH + 1, 1000, 200_000]) {
        assert.throws(
          () => parseJson(plantBody(id, levels)),
          (error: Error) => {
            assert.ok(error instanceof JsonDepthError, `${levels} levels, id ${id}: ${String(error)}`);
            assert.equal(error.message, DEPTH_MESSAGE);
            return true;
          },
        );
      }
      assert.deepEqual((parseJson(plantBody(id, JSON_MAX_DEPTH)) as { name: string }).name, 'Fern', `${JSON_MAX_DEPTH} levels are fine`);
    }
  });

  it('counts only brackets outside strings, and objects as well as arrays', () => {
    const inString = JSON.stringify({ id: 9007199254740993n.toString(), note: nested(5000), quoted: '\\"[[[' });
    assert.equal((parseJson(inString) as { note: string }).note, nested(5000));
    const objects = '{"a":'.repeat(JSON_MAX_DEPTH + 1) + '1' + '}'.repeat(JSON_MAX_DEPTH + 1);
    assert.throws(() => parseJson(objects), JsonDepthError);
    const mixed = '[{"a":'.repeat(JSON_MAX_DEPTH / 2) + '1' + '}]'.repeat(JSON_MAX_DEPTH / 2);
    assert.doesNotThrow(() => parseJson(mixed));
    assert.throws(() => parseJson(`[${mixed}]`), JsonDepthError);
    // Wide is not deep: many siblings at one level.
    assert.doesNotThrow(() => parseJson(`[${Array.from({ length: 10_000 }, () => '[1]').join(',')}]`));
  });

  describe('over HTTP: 400 with one message, whatever the digits in it', async () => {
    const t = await testApp(after, { bodyLimit: 1024 * 1024 });
    // Imports only: every one is refused, so it must stay empty.
    const importer = await testApp(after);
    for (const id of IDS) {
      for (const levels of [JSON_MAX_DEPTH + 1, 200_000]) {
        it(`POST /plants, id ${id}, ${levels} levels`, async () => {
          const message = assertError(await t.call('POST', '/plants', { body: plantBody(id, levels) }), 400);
          assert.equal(message, `body is ${DEPTH_MESSAGE}`);
        });
      }
      it(`POST /plants, id ${id}, ${JSON_MAX_DEPTH} levels: stored`, async () => {
        assert.equal((await t.call('POST', '/plants', { body: plantBody(id, JSON_MAX_DEPTH) })).statusCode, 200);
      });
      it(`PATCH /plants/${id} as a merge patch, 200,000 levels`, async () => {
        const res = await t.call('PATCH', `/plants/${id}`, {
          body: `{"tag":"x","extra":${nested(200_000)}}`,
          headers: { 'content-type': 'application/merge-patch+json' },
        });
        assert.equal(assertError(res, 400), `body is ${DEPTH_MESSAGE}`);
      });
      for (const [type, body, where] of [
        ['application/x-ndjson', `{"id":2,"name":"a"}\n${plantBody(id, 20_000)}\n`, 'line 2'],
        ['application/json', `[{"id":2,"name":"a"},${plantBody(id, 20_000)}]`, 'element 1'],
      ] as const) {
        // 20,000 levels are 40 KB: under IMPORT_MAX_ROW_BYTES (64 KiB), so the depth decides.
        it(`POST /plants/import (${type}), id ${id}, 20,000 levels: 400 naming the row, nothing stored`, async () => {
          const res = await importer.app.inject({
            method: 'POST',
            url: '/plants/import',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': type },
            payload: body,
          });
          assert.equal(assertError(res, 400), `${where}: ${DEPTH_MESSAGE}`);
          assert.equal(await importer.store.plants.count(), 0);
        });
      }
    }
  });
});
