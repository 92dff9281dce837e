import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { testApp, TOKEN, type TestApp } from '../helpers.js';

/**
 * The bytes of every keyed POST's answers, on either store (test/store/postgres/http.process.test.ts runs
 * this file again on PostgreSQL): each route answers from its write's outcome with one function
 * (http/idempotency.ts), so the first answer with a key and every replay of it are the same status,
 * headers and body, byte for byte, and the same as the answer without a key, but for what the write
 * itself makes anew each time (a version, an id, a secret).
 */

/** Headers that belong to the moment or the connection, not to the answer. */
const MOMENT = new Set(['date', 'x-request-id', 'connection', 'keep-alive', 'idempotent-replayed']);

function answerOf(response: LightMyRequestResponse): { status: number; headers: Record<string, unknown>; body: string } {
  const headers = Object.fromEntries(Object.entries(response.headers).filter(([name]) => !MOMENT.has(name) && !name.startsWith('ratelimit')));
  return { status: response.statusCode, headers, body: response.payload };
}

interface Request {
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

function send(t: TestApp, { path, body, headers = {} }: Request, key?: string) {
  return t.app.inject({
    method: 'POST',
    url: path,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    },
    payload: body,
  });
}

/**
 * The request with a key, again with it, and (unless told not to) without one: the first two the same
 * bytes, the replay marked and the first not; answers what each answered.
 */
async function keyedTwice(t: TestApp, request: Request, key: string) {
  covered.add(request.path.split('?')[0]!.replace(/^\/webhooks\/[^/]+\//, '/webhooks/{id}/'));
  const first = await send(t, request, key);
  const replay = await send(t, request, key);
  assert.equal(first.headers['idempotent-replayed'], undefined);
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.deepEqual(answerOf(replay), answerOf(first), `${request.path}: the replay is the first answer, byte for byte`);
  return answerOf(first);
}

/** The answer with what a write makes anew blanked: a version (ETag), an endpoint's id, secret and time, the length they make. */
function blanked(answer: ReturnType<typeof answerOf>) {
  const blank = (text: string) =>
    text
      .replace(/^"\d+"$/, '"…"')
      .replace(/ep_[0-9A-Z]+/g, 'ep_…')
      .replace(/whsec_[A-Za-z0-9+/=]+/g, 'whsec_…')
      .replace(/"createdAt":"[^"]+"/g, '"createdAt":"…"');
  const headers = Object.fromEntries(
    Object.entries(answer.headers).map(([name, value]) => [name, name === 'content-length' ? '…' : blank(String(value))]),
  );
  return { ...answer, headers, body: blank(answer.body) };
}

const URL = 'https://93.184.215.14/answers-hook';

/** The paths of the keyed POSTs this file has sent (every one must be: the last test says so). */
const covered = new Set<string>();

describe('the answers of keyed POSTs, byte for byte', () => {
  it('POST /plants: created and replaced (200, ETag), and the 412s of If-None-Match (* or a version) and If-Match', async () => {
    const t = await testApp(after);
    const created = await keyedTwice(t, { path: '/plants', body: '{"id":1,"name":"Fern","tag":"green"}' }, 'created');
    assert.equal(created.status, 200);
    assert.equal(created.body, '{"name":"Fern","tag":"green"}');
    const plain = answerOf(await send(t, { path: '/plants', body: '{"id":2,"name":"Fern","tag":"green"}' }));
    assert.deepEqual(blanked(plain), blanked(created), 'the answer without a key');
    const replaced = await keyedTwice(t, { path: '/plants', body: '{"id":2,"name":"Moss"}' }, 'replaced');
    assert.deepEqual(blanked(replaced), blanked(answerOf(await send(t, { path: '/plants', body: '{"id":2,"name":"Moss"}' }))));
    assert.notEqual(replaced.headers.etag, created.headers.etag);
    const conditions: Array<[string, Record<string, string>]> = [
      ['exists', { 'if-none-match': '*' }],
      ['if-match', { 'if-match': '"999999"' }],
      ['both', { 'if-match': '"999999"', 'if-none-match': '*' }],
      ['if-none-match', { 'if-none-match': String(created.headers.etag) }],
    ];
    for (const [name, headers] of conditions) {
      const request = { path: '/plants', body: '{"id":1,"name":"Ivy"}', headers };
      const refused = await keyedTwice(t, request, name);
      assert.equal(refused.status, 412, refused.body);
      assert.deepEqual(answerOf(await send(t, request)), refused, `${name}: the 412 without a key`);
    }
    // If-None-Match naming another version: the put is made, once, under its condition.
    const unless = await keyedTwice(t, { path: '/plants', body: '{"id":1,"name":"Ivy"}', headers: { 'if-none-match': '"999998"' } }, 'unless');
    assert.equal(unless.status, 200, unless.body);
    assert.notEqual(unless.headers.etag, created.headers.etag);
  });

  it('POST /plants/import: the counts (200) and the 409 of a create-only import', async () => {
    const t = await testApp(after);
    const ndjson = (ids: number[]) => ids.map((id) => `{"id":${id},"name":"p${id}"}`).join('\n');
    const imported = await keyedTwice(t, { path: '/plants/import', body: ndjson([1, 2]), headers: { 'content-type': 'application/x-ndjson' } }, 'i');
    assert.deepEqual([imported.status, imported.body], [200, '{"created":2,"replaced":0}']);
    const plain = await send(t, { path: '/plants/import', body: ndjson([3, 4]), headers: { 'content-type': 'application/x-ndjson' } });
    assert.deepEqual(answerOf(plain), imported);
    const conflict = { path: '/plants/import?mode=create-only', body: ndjson([5, 1]), headers: { 'content-type': 'application/x-ndjson' } };
    const refused = await keyedTwice(t, conflict, 'c');
    assert.deepEqual(
      [refused.status, JSON.parse(refused.body)],
      [409, { error: 409, message: 'a plant with id 1 exists already (mode=create-only): nothing was imported', code: 'import_conflict' }],
    );
    assert.deepEqual(answerOf(await send(t, conflict)), refused);
  });

  it('POST /webhooks (201, Location), rotate-secret (200; 404) and replay (202; 404)', async () => {
    const t = await testApp(after);
    const registration = { path: '/webhooks', body: JSON.stringify({ url: URL, description: 'answers' }) };
    const created = await keyedTwice(t, registration, 'register');
    assert.equal(created.status, 201);
    const id = (JSON.parse(created.body) as { id: string }).id;
    assert.equal(created.headers.location, `/webhooks/${id}`);
    assert.match(created.body, /"secret":"whsec_/);
    assert.deepEqual(blanked(answerOf(await send(t, registration))), blanked(created));
    const rotation = { path: `/webhooks/${id}/rotate-secret` };
    const rotated = await keyedTwice(t, rotation, 'rotate');
    assert.equal(rotated.status, 200);
    assert.deepEqual(blanked(answerOf(await send(t, rotation))), blanked(rotated));
    const replay = { path: `/webhooks/${id}/replay`, body: '{"since":"2026-01-01T00:00:00Z"}' };
    const requeued = await keyedTwice(t, replay, 'replay');
    assert.deepEqual([requeued.status, requeued.body], [202, '{"requeued":0}']);
    assert.deepEqual(answerOf(await send(t, replay)), requeued);
    const gone = 'ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C';
    for (const missing of [{ path: `/webhooks/${gone}/rotate-secret` }, { path: `/webhooks/${gone}/replay`, body: replay.body }]) {
      const refused = await keyedTwice(t, missing, missing.path);
      assert.deepEqual(
        [refused.status, JSON.parse(refused.body)],
        [404, { error: 404, message: `no webhook endpoint with id ${gone}`, code: 'not_found' }],
      );
      assert.deepEqual(answerOf(await send(t, missing)), refused);
    }
  });

  it('POST /tokens (201, Location, the secret) and the 409 of a name taken', async () => {
    const t = await testApp(after);
    const made = await keyedTwice(t, { path: '/tokens', body: '{"name":"answers","scopes":["plants:read"]}' }, 'token');
    assert.equal(made.status, 201);
    const id = (JSON.parse(made.body) as { id: string }).id;
    assert.equal(made.headers.location, `/tokens/${id}`);
    // What each token makes anew: its id (in the body and the Location), its secret, its time; and the name, told apart here.
    const blankToken = (answer: ReturnType<typeof answerOf>) => {
      const blank = (text: string) =>
        text
          .replace(/[0-9a-f]{12}/g, 'id')
          .replace(/ps_[A-Za-z0-9_-]+/g, 'ps_…')
          .replace(/"createdAt":"[^"]+"/g, '"createdAt":"…"')
          .replace(/answers-2/g, 'answers');
      const headers = Object.fromEntries(
        Object.entries(answer.headers).map(([name, value]) => [name, name === 'content-length' ? '…' : blank(String(value))]),
      );
      return { ...answer, headers, body: blank(answer.body) };
    };
    const plain = answerOf(await send(t, { path: '/tokens', body: '{"name":"answers-2","scopes":["plants:read"]}' }));
    assert.deepEqual(blankToken(plain), blankToken(made), 'the answer without a key');
    const taken = { path: '/tokens', body: '{"name":"answers","scopes":["plants:read"]}' };
    const refused = await keyedTwice(t, taken, 'taken');
    assert.deepEqual(
      [refused.status, JSON.parse(refused.body)],
      [409, { error: 409, message: 'an active token is already named "answers"', code: 'token_name_taken', field: 'body.name' }],
    );
    assert.deepEqual(answerOf(await send(t, taken)), refused);
  });

  it('covers every POST that takes an Idempotency-Key, so every kind of keyed write', async () => {
    const t = await testApp(after);
    const document = (await t.call('GET', '/openapi.json', { token: null })).json<{
      paths: Record<string, { post?: { parameters?: Array<{ name: string; in: string }> } }>;
    }>();
    const keyed = Object.entries(document.paths)
      .filter(([, item]) => item.post?.parameters?.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key'))
      .map(([path]) => path);
    assert.ok(keyed.length >= 6, keyed.join(', '));
    assert.deepEqual([...covered].sort(), keyed.sort(), 'a keyed POST whose answers this file does not check');
  });
});
