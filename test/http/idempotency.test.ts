import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { sweepExpiredKeys } from '../../src/store/idempotency-sweep.js';
import { assertError, testApp, type TestApp } from '../helpers.js';
import { until } from '../toolkit.js';

/**
 * Idempotency-Key on POST /plants (http/idempotency.ts), in-process, on either store (PostgreSQL too:
 * test/store/postgres/http.process.test.ts runs this file again there): a retry gets the first answer
 * again without a second write, the same key with another request is 422, keys are per token, a refused
 * request keeps nothing, a malformed key is 400, and answers expire after IDEMPOTENCY_KEY_TTL.
 */

function post(t: TestApp, body: unknown, key: string | undefined, options: { token?: string | null; headers?: Record<string, string> } = {}) {
  const headers = { ...options.headers, ...(key === undefined ? {} : { 'idempotency-key': key }) };
  return t.call('POST', '/plants', { body, headers, token: options.token });
}

/** The plant's version (its ETag) and how many events the change feed holds for it. */
async function written(t: TestApp, id: number): Promise<{ etag: string | undefined; events: number }> {
  const read = await t.call('GET', `/plants/${id}`);
  const events = (await t.call('GET', '/events?limit=1000')).json<Array<{ data: { id: number } }>>();
  return { etag: read.headers.etag, events: events.filter((e) => e.data.id === id).length };
}

function assertReplayOf(replay: LightMyRequestResponse, first: LightMyRequestResponse): void {
  assert.equal(replay.statusCode, first.statusCode, replay.payload);
  assert.equal(replay.payload, first.payload);
  assert.equal(replay.headers['content-type'], first.headers['content-type']);
  assert.equal(replay.headers.etag, first.headers.etag);
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.equal(first.headers['idempotent-replayed'], undefined);
}

describe('Idempotency-Key on POST /plants', () => {
  it('answers a retry with the first answer (status, ETag, body), marked Idempotent-Replayed, without writing again', async () => {
    const t = await testApp(after);
    const first = await post(t, { id: 1, name: 'Monstera', tag: 'tropical' }, 'key-1');
    assert.equal(first.statusCode, 200, first.payload);
    assert.equal(first.payload, '{"name":"Monstera","tag":"tropical"}');
    const before = await written(t, 1);
    assert.deepEqual(before, { etag: first.headers.etag, events: 1 });
    for (let i = 0; i < 3; i++) assertReplayOf(await post(t, { id: 1, name: 'Monstera', tag: 'tropical' }, 'key-1'), first);
    assert.deepEqual(await written(t, 1), before, 'no second write: same version, one event');
    // Without a key, the same request writes again: a new version.
    const again = await post(t, { id: 1, name: 'Monstera', tag: 'tropical' }, undefined);
    assert.notEqual(again.headers.etag, first.headers.etag);
  });

  it('keeps the answer the same request gets without a key, byte for byte', async () => {
    const t = await testApp(after);
    const keyed = await post(t, { id: 1, name: 'Fern' }, 'k');
    const plain = await post(t, { id: 2, name: 'Fern' }, undefined);
    assert.equal(keyed.payload, plain.payload);
    assert.equal(keyed.headers['content-type'], plain.headers['content-type']);
    assert.match(String(keyed.headers.etag), /^"\d+"$/);
  });

  it("takes the draft's quoted form and Stripe's bare form as the same key", async () => {
    const t = await testApp(after);
    const first = await post(t, { id: 1, name: 'a' }, 'abc "q" \\');
    assert.equal(first.statusCode, 200, first.payload);
    assertReplayOf(await post(t, { id: 1, name: 'a' }, '"abc \\"q\\" \\\\"'), first);
    const quoted = await post(t, { id: 2, name: 'b' }, '"xyz"');
    assertReplayOf(await post(t, { id: 2, name: 'b' }, 'xyz'), quoted);
  });

  it('answers 422 naming the key when it comes with another request: another body, path, query or condition', async () => {
    const t = await testApp(after);
    assert.equal((await post(t, { id: 1, name: 'a' }, 'used')).statusCode, 200);
    assertError(await post(t, { id: 1, name: 'b' }, 'used'), 422, 'Idempotency-Key "used" was used for another request');
    // The same JSON written otherwise is another body: the bytes are compared.
    assertError(await post(t, '{"id":1,  "name":"a"}', 'used'), 422, 'Idempotency-Key');
    assertError(await post(t, { id: 1, name: 'a' }, 'used', { headers: { 'if-none-match': '*' } }), 422, 'Idempotency-Key');
    assertError(
      await t.call('POST', '/plants/import', {
        body: '{"id":1,"name":"a"}',
        headers: { 'idempotency-key': 'used', 'content-type': 'application/x-ndjson' },
      }),
      422,
      'used',
    );
    assert.equal((await t.call('GET', '/plants/1')).json<{ name: string }>().name, 'a', 'nothing done by the refused requests');
    // And the first request still gets its answer.
    assert.equal((await post(t, { id: 1, name: 'a' }, 'used')).headers['idempotent-replayed'], 'true');
  });

  it("keeps keys per token: another token's request with the same key is its own", async () => {
    const t = await testApp(after);
    const other = await t.tokenWith('plants:write', 'plants:read');
    const mine = await post(t, { id: 1, name: 'mine' }, 'shared');
    const theirs = await post(t, { id: 1, name: 'theirs' }, 'shared', { token: other });
    assert.equal(theirs.statusCode, 200, theirs.payload);
    assert.equal(theirs.headers['idempotent-replayed'], undefined);
    assert.equal((await t.call('GET', '/plants/1')).json<{ name: string }>().name, 'theirs');
    assertReplayOf(await post(t, { id: 1, name: 'mine' }, 'shared'), mine);
    assert.equal((await post(t, { id: 1, name: 'theirs' }, 'shared', { token: other })).headers['idempotent-replayed'], 'true');
  });

  it('keeps an answer the write decided (412 of If-None-Match: *), and replays it after the plant is gone', async () => {
    const t = await testApp(after);
    await post(t, { id: 1, name: 'there' }, undefined);
    const refused = await post(t, { id: 1, name: 'new' }, 'create', { headers: { 'if-none-match': '*' } });
    assertError(refused, 412, 'already exists');
    assert.equal((await t.call('DELETE', '/plants/1')).statusCode, 204);
    const retry = await post(t, { id: 1, name: 'new' }, 'create', { headers: { 'if-none-match': '*' } });
    assertReplayOf(retry, refused);
    assert.equal((await t.call('GET', '/plants/1')).statusCode, 404);
    // If-Match naming no current version, with If-None-Match: * or without: 412 kept, replayed.
    await post(t, { id: 2, name: 'there' }, undefined);
    const conditions: Array<Record<string, string>> = [{ 'if-match': '"999999"' }, { 'if-match': '"999999"', 'if-none-match': '*' }];
    for (const headers of conditions) {
      const key = `if-match ${Object.keys(headers).length}`;
      const failed = await post(t, { id: 2, name: 'x' }, key, { headers });
      assertError(failed, 412, 'If-Match');
      assertReplayOf(await post(t, { id: 2, name: 'x' }, key, { headers }), failed);
    }
    // If-Match naming the current version and If-None-Match: *: the plant exists, 412 kept.
    const current = String((await t.call('GET', '/plants/2')).headers.etag);
    const both = { 'if-match': current, 'if-none-match': '*' };
    const exists = await post(t, { id: 2, name: 'x' }, 'both', { headers: both });
    assertError(exists, 412, 'already exists');
    assertReplayOf(await post(t, { id: 2, name: 'x' }, 'both', { headers: both }), exists);
  });

  it('keeps nothing for a request refused before it ran (400, 401, 403, 413, 415, 429): the corrected one runs with the key', async () => {
    const t = await testApp(after, { bodyLimit: 1024, config: { rateLimitPerMinute: 6 } });
    const reader = await t.tokenWith('plants:read');
    assertError(await post(t, { id: 1, name: '' }, 'k1'), 400, 'body.name');
    assertError(await post(t, { id: 1, name: 'a' }, 'k1', { token: null }), 401);
    assertError(await post(t, { id: 1, name: 'a' }, 'k1', { token: reader }), 403);
    assertError(await post(t, { id: 1, name: 'x'.repeat(2000) }, 'k1'), 413);
    assertError(await t.call('POST', '/plants', { body: 'id=1', headers: { 'content-type': 'text/plain', 'idempotency-key': 'k1' } }), 415);
    const ran = await post(t, { id: 1, name: 'a' }, 'k1');
    assert.equal(ran.statusCode, 200, ran.payload);
    assert.equal(ran.headers['idempotent-replayed'], undefined);
    // The rate limit (6 a minute for this token) refuses the next ones: 429 keeps nothing either.
    const answers: LightMyRequestResponse[] = [];
    for (let i = 0; i < 8; i++) answers.push(await post(t, { id: 2, name: 'b' }, 'k2'));
    const limited = answers.find((answer) => answer.statusCode !== 200);
    assert.ok(limited, 'the rate limit refused one');
    assertError(limited, 429);
    // Kept: k1's answer and k2's first (200); the 429 added none.
    assert.equal(await t.store.idempotency.count(), 2);
  });

  it('refuses a malformed key with 400 naming Idempotency-Key, and writes nothing', async () => {
    const t = await testApp(after);
    const bad = ['', ' ', 'x'.repeat(256), 'tab\there', 'é', '"unclosed', '"bad \\escape"', '""', `"${'x'.repeat(256)}"`, 'del\u007f'];
    for (const key of bad) {
      const response = await post(t, { id: 1, name: 'a' }, key);
      assertError(response, 400, 'headers.idempotency-key must be 1 to 255 printable ASCII characters');
    }
    assert.equal((await t.call('GET', '/plants/1')).statusCode, 404);
    // The longest keys are fine: 255 characters, bare or quoted.
    assert.equal((await post(t, { id: 1, name: 'a' }, 'k'.repeat(255))).statusCode, 200);
    assert.equal((await post(t, { id: 2, name: 'a' }, `"${'\\"'.repeat(255)}"`)).statusCode, 200);
  });

  it('forgets an answer once IDEMPOTENCY_KEY_TTL has passed: the request runs again, and the sweep deletes it', async () => {
    const t = await testApp(after, { config: { idempotencyKeyTtlSeconds: 1 } });
    const first = await post(t, { id: 1, name: 'a' }, 'short');
    assert.equal(await t.store.idempotency.count(), 1);
    await until(async () => (await t.store.idempotency.count()) === 0, 'the answer to expire', { timeoutMs: 30_000 });
    const after1s = await post(t, { id: 1, name: 'a' }, 'short');
    assert.equal(after1s.statusCode, 200);
    assert.equal(after1s.headers['idempotent-replayed'], undefined);
    assert.notEqual(after1s.headers.etag, first.headers.etag, 'written again');
    await until(async () => (await t.store.idempotency.count()) === 0, 'the second answer to expire', { timeoutMs: 30_000 });
    assert.equal(await t.store.idempotency.deleteExpired(10), 1, 'the sweep deletes the expired answer');
    assert.equal(await t.store.idempotency.deleteExpired(10), 0);
    assert.equal(await t.store.idempotency.count(), 0);
  });

  it('is swept in the background: the answers past their time to live are deleted, the others kept', async () => {
    // Five seconds to live: the kept answer is made after the swept one expired, and the sweep starts at once;
    // it stays unexpired through the sweep's first batch unless the machine stalls for five seconds.
    const t = await testApp(after, { config: { idempotencyKeyTtlSeconds: 5 } });
    const store = t.store.idempotency;
    await post(t, { id: 1, name: 'a' }, 'swept');
    await until(async () => (await store.count()) === 0, 'the first answer to expire');
    const kept = await post(t, { id: 2, name: 'b' }, 'kept');
    let deleted = 0;
    const counting = { deleteExpired: (limit: number) => store.deleteExpired(limit).then((n) => ((deleted += n), n)) };
    const stop = sweepExpiredKeys(counting, 5000, { warn: () => assert.fail('the sweep failed'), debug: () => undefined });
    after(stop);
    await until(() => deleted === 1, 'the sweep to delete the expired answer');
    stop();
    assert.equal(await store.count(), 1, 'the unexpired answer is kept');
    const replayed = await post(t, { id: 2, name: 'b' }, 'kept');
    assert.equal(replayed.headers['idempotent-replayed'], 'true');
    assert.equal(replayed.headers.etag, kept.headers.etag);
  });

  it('stops a sweep under way when stopped: no batch asked for after, no warning for the store closing', async () => {
    let asked = 0;
    let answer: () => void = () => undefined;
    // A store with ever more expired outcomes, each batch answered when the test says.
    const endless = {
      deleteExpired: (limit: number) => {
        asked++;
        return new Promise<number>((resolve) => (answer = () => resolve(limit)));
      },
    };
    const stop = sweepExpiredKeys(endless, 3_600_000, { warn: () => assert.fail('warned'), debug: () => undefined });
    after(stop);
    answer();
    await until(() => asked === 2, 'a second batch', { timeoutMs: 10_000 });
    stop();
    answer();
    // The sweep asks its next batch one turn of the event loop after the last (setImmediate): ten turns on, none was asked.
    for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(asked, 2, 'no batch after the stop');
  });
});
