import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { assertError, testApp, TOKEN, type TestApp } from '../helpers.js';

/**
 * POST /plants and POST /plants/import under an Idempotency-Key (plants/keyed.ts), on either store: an
 * import's body is fingerprinted as it streams, a retry drains it and gets the first answer, another
 * body is 422, a create-only conflict keeps its 409, and a second request with the key while the first
 * still runs is 409, then gets the first's answer.
 */

const NDJSON = 'application/x-ndjson';

function importRequest(t: TestApp, body: string | PassThrough, key: string | undefined, query = '') {
  return t.app.inject({
    method: 'POST',
    url: `/plants/import${query}`,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': NDJSON, ...(key === undefined ? {} : { 'idempotency-key': key }) },
    payload: body,
  });
}

const rows = (ids: number[], name = 'p') => ids.map((id) => JSON.stringify({ id, name: `${name}${id}` })).join('\n');

describe('Idempotency-Key on POST /plants/import', () => {
  it('replays the first answer to the same body (read through for its fingerprint), importing nothing again', async () => {
    const t = await testApp(after);
    const body = rows([1, 2, 3]);
    const first = await importRequest(t, body, 'imp');
    assert.equal(first.statusCode, 200, first.payload);
    assert.equal(first.payload, (await importRequest(t, rows([7, 8, 9]), undefined)).payload, 'the answer an import without a key gets');
    assert.deepEqual(first.json(), { created: 3, replaced: 0 });
    const version = (await t.call('GET', '/plants/1')).headers.etag;
    const replay = await importRequest(t, body, 'imp');
    assert.equal(replay.statusCode, 200);
    assert.equal(replay.payload, first.payload);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal((await t.call('GET', '/plants/1')).headers.etag, version, 'not imported again');
  });

  it('answers 422 to another body, another format or another mode with the key', async () => {
    const t = await testApp(after);
    assert.equal((await importRequest(t, rows([1]), 'imp')).statusCode, 200);
    assertError(await importRequest(t, rows([1, 2]), 'imp'), 422, 'Idempotency-Key "imp"');
    assertError(await importRequest(t, rows([1]), 'imp', '?mode=create-only'), 422, 'imp');
    const asJson = await t.app.inject({
      method: 'POST',
      url: '/plants/import',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'idempotency-key': 'imp' },
      payload: rows([1]),
    });
    assertError(asJson, 422, 'imp');
    assert.equal((await t.call('GET', '/plants/2')).statusCode, 404);
  });

  it('keeps the 409 of a create-only import that found an existing id, and replays it once the id is gone', async () => {
    const t = await testApp(after);
    await t.call('POST', '/plants', { body: { id: 2, name: 'there' } });
    const conflict = await importRequest(t, rows([1, 2]), 'once', '?mode=create-only');
    assertError(conflict, 409, 'a plant with id 2 exists already');
    assert.equal((await t.call('GET', '/plants/1')).statusCode, 404, 'nothing stored');
    assert.equal((await t.call('DELETE', '/plants/2')).statusCode, 204);
    const replay = await importRequest(t, rows([1, 2]), 'once', '?mode=create-only');
    assert.equal(replay.statusCode, 409);
    assert.equal(replay.payload, conflict.payload);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal((await t.call('GET', '/plants/1')).statusCode, 404, 'still nothing stored');
  });

  it('keeps nothing for an import refused for its body (a bad row, 400): the corrected one runs with the key', async () => {
    const t = await testApp(after);
    assertError(await importRequest(t, `${rows([1])}\n{"id":2,"name":""}`, 'fix'), 400, 'line 2');
    const fixed = await importRequest(t, rows([1, 2]), 'fix');
    assert.equal(fixed.statusCode, 200, fixed.payload);
    assert.equal(fixed.headers['idempotent-replayed'], undefined);
  });

  it('answers 409 to a second request with the key while the first still runs, then the first answer to a retry', async () => {
    const t = await testApp(after);
    // Two imports with one key, both bodies held open: whichever comes second is refused at once.
    const bodies = [new PassThrough(), new PassThrough()];
    bodies.forEach((body, i) => body.write(`${rows([10 * i + 1])}\n`));
    const answers = bodies.map((body) => importRequest(t, body, 'busy'));
    const refused = await Promise.race(answers.map((answer, i) => answer.then((response) => ({ response, i }))));
    assertError(refused.response, 409, 'a request with Idempotency-Key "busy" is still running');
    const running = 1 - refused.i;
    bodies[running]!.end(rows([10 * running + 2]));
    const first = await answers[running]!;
    assert.equal(first.statusCode, 200, first.payload);
    assert.deepEqual(first.json(), { created: 2, replaced: 0 });
    assert.equal((await t.call('GET', `/plants/${10 * refused.i + 1}`)).statusCode, 404, 'the refused one imported nothing');
    const retry = await importRequest(t, `${rows([10 * running + 1])}\n${rows([10 * running + 2])}`, 'busy');
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.equal(retry.payload, first.payload);
  });
});

describe('Idempotency-Key on POST /plants under concurrent retries', () => {
  it('writes once however many requests with the key arrive together: one runs, the others replay it or are 409', async () => {
    const t = await testApp(after);
    const answers: LightMyRequestResponse[] = await Promise.all(
      Array.from({ length: 20 }, () => t.call('POST', '/plants', { body: { id: 5, name: 'once' }, headers: { 'idempotency-key': 'herd' } })),
    );
    const ran = answers.filter((a) => a.statusCode === 200 && a.headers['idempotent-replayed'] === undefined);
    assert.equal(ran.length, 1, answers.map((a) => `${a.statusCode} ${String(a.headers['idempotent-replayed'] ?? '')}`).join(', '));
    for (const answer of answers) {
      if (answer.statusCode === 409) assertError(answer, 409, 'still running');
      else assert.deepEqual([answer.statusCode, answer.payload, answer.headers.etag], [200, ran[0]!.payload, ran[0]!.headers.etag]);
    }
    const events = (await t.call('GET', '/events?limit=100')).json<unknown[]>();
    assert.equal(events.length, 1, 'one write');
  });

  it('answers every retry of a key answered already with that answer, however many come together (none 409)', async () => {
    const t = await testApp(after);
    const first = await t.call('POST', '/plants', { body: { id: 6, name: 'answered' }, headers: { 'idempotency-key': 'done' } });
    assert.equal(first.statusCode, 200);
    const retries: LightMyRequestResponse[] = await Promise.all(
      Array.from({ length: 10 }, () => t.call('POST', '/plants', { body: { id: 6, name: 'answered' }, headers: { 'idempotency-key': 'done' } })),
    );
    assert.deepEqual(
      retries.map((a) => [a.statusCode, a.headers['idempotent-replayed'], a.payload]),
      retries.map(() => [200, 'true', first.payload]),
    );
    // A different request with the key, beside them, is still 422.
    const other = await Promise.all([
      t.call('POST', '/plants', { body: { id: 6, name: 'answered' }, headers: { 'idempotency-key': 'done' } }),
      t.call('POST', '/plants', { body: { id: 6, name: 'other' }, headers: { 'idempotency-key': 'done' } }),
    ]);
    assert.deepEqual(
      other.map((a) => a.statusCode),
      [200, 422],
    );
  });
});
