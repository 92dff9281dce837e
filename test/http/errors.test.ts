import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createLogger } from '../../src/logging/logger.js';
import { StoreBusyError, StoreUnavailableError, type PlantStore, type Store } from '../../src/store/store.js';
import { assertError, openSqlite, tempDir, testApp, TOKEN } from '../helpers.js';

/** A real SQLite store whose plant operations all fail with this error. */
function failingStore(error: () => Error): Store {
  const real = openSqlite(tempDir(after));
  const fail = async (): Promise<never> => {
    throw error();
  };
  const plants: PlantStore = {
    get: fail,
    getMany: fail,
    page: fail,
    count: fail,
    put: fail,
    patch: fail,
    delete: fail,
    export: fail,
    startImport: fail,
  };
  return {
    kind: real.kind,
    plants,
    // The writes of POSTs (POST /plants's put among them).
    writes: { apply: fail },
    tokens: real.tokens,
    webhooks: real.webhooks,
    warnings: [],
    migrated: { created: false, applied: [] },
    events: real.events,
    searchIndex: real.searchIndex,
    writeBatches: real.writeBatches,
    idempotency: real.idempotency,
    ping: () => real.ping(),
    close: () => real.close(),
  };
}

describe('error answers', async () => {
  const t = await testApp(after);

  it('404 for an unknown route, in the Error shape', async () => {
    // (`/` is no unknown route: it leads a browser to /docs, test/docs/home.test.ts.)
    for (const url of ['/nope', '/plants/1/leaves', '/plant', '/docs/nope']) {
      assertError(await t.call('GET', url), 404, url);
    }
    assertError(await t.call('GET', '/nope', { token: null }), 404);
  });

  it('405 with Allow for a method the route does not have', async () => {
    const res = await t.call('DELETE', '/plants');
    assertError(res, 405, 'DELETE');
    assert.deepEqual(String(res.headers.allow).split(/,\s*/).sort(), ['GET', 'HEAD', 'POST']);
    const item = await t.call('POST', '/plants/1', { body: { name: 'x' } });
    assertError(item, 405, 'POST');
    assert.deepEqual(String(item.headers.allow).split(/,\s*/).sort(), ['DELETE', 'GET', 'HEAD', 'PATCH', 'PUT']);
    const health = await t.call('PUT', '/healthz', { token: null });
    assertError(health, 405);
    assert.deepEqual(String(health.headers.allow).split(/,\s*/).sort(), ['GET', 'HEAD']);
  });

  describe('415 for a body that is not JSON by its media type', () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']) {
      it(type, async () => {
        const res = await t.call('POST', '/plants', { body: '{"id":1,"name":"x"}', headers: { 'content-type': type } });
        assertError(res, 415, /media type/);
      });
    }
    it('when a body comes without a Content-Type', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/plants',
        headers: { authorization: `Bearer ${TOKEN}` },
        payload: '{"id":1,"name":"x"}',
      });
      assertError(res, 415, /media type/);
    });
    it('names the media types taken in Accept, and on a PATCH in Accept-Patch too (RFC 5789 §2.2), as the document says', async () => {
      const merge = 'application/merge-patch+json, application/json';
      for (const [method, url, accept, acceptPatch] of [
        ['PATCH', '/plants/1', merge, merge],
        ['PATCH', '/webhooks/ep_01ARZ3NDEKTSV4RRFFQ69G5FAV', merge, merge],
        ['POST', '/plants', 'application/json', undefined],
        ['POST', '/plants/import', 'application/x-ndjson, application/json, text/csv', undefined],
      ] as const) {
        const res = await t.call(method, url, { body: '[]', headers: { 'content-type': 'application/json-patch+json' } });
        assertError(res, 415, /media type/);
        assert.equal(res.headers.accept, accept, `${method} ${url}`);
        assert.equal(res.headers['accept-patch'], acceptPatch, `${method} ${url}`);
      }
      const doc = (await t.call('GET', '/openapi.json', { token: null })).json();
      // The 415's own headers; those every answer of the operation may carry are references (openapi/headers.ts).
      const own = (headers: Record<string, { $ref?: string }>) => Object.keys(headers).filter((name) => headers[name]!.$ref === undefined);
      assert.deepEqual(own(doc.paths['/plants/{id}'].patch.responses['415'].headers).sort(), ['Accept', 'Accept-Patch']);
      assert.deepEqual(own(doc.paths['/plants'].post.responses['415'].headers), ['Accept']);
    });
    it('accepts application/json with a charset', async () => {
      const res = await t.call('POST', '/plants', { body: { id: 8, name: 'x' }, headers: { 'content-type': 'application/json; charset=utf-8' } });
      assert.equal(res.statusCode, 200);
    });
  });

  it('400 when a POST has no body at all', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/plants', headers: { authorization: `Bearer ${TOKEN}` } });
    assertError(res, 400, 'body');
  });

  describe('413 for a body over the limit', () => {
    it('64 KiB by default', async () => {
      const near = { id: 9, name: 'x', padding: 'p'.repeat(64 * 1024 - 100) };
      assert.equal((await t.call('POST', '/plants', { body: near })).statusCode, 200, 'just under the limit is fine');
      const over = { id: 9, name: 'x', padding: 'p'.repeat(64 * 1024) };
      assertError(await t.call('POST', '/plants', { body: over }), 413, String(64 * 1024));
      assertError(await t.call('PUT', '/plants/9', { body: over }), 413);
      assertError(await t.call('PATCH', '/plants/9', { body: over }), 413);
    });
    it('a configured smaller limit', async () => {
      const small = await testApp(after, { bodyLimit: 2048 });
      assert.equal((await small.call('POST', '/plants', { body: { id: 1, name: 'n'.repeat(200) } })).statusCode, 200);
      assertError(await small.call('POST', '/plants', { body: { id: 1, name: 'x', padding: 'p'.repeat(2048) } }), 413, '2048');
    });
  });

  it('every error carries the request id header', async () => {
    const res = await t.call('GET', '/plants/abc');
    assertError(res, 400);
    assert.ok(res.headers['x-request-id']);
  });

  it('500 for an unexpected error: a generic message with the request id, nothing internal', async () => {
    const secret = 'SELECT * FROM plants -- internal detail at /srv/secret/path.ts:42';
    const broken = await testApp(after, { store: failingStore(() => new Error(secret)) });
    for (const [method, url, body] of [
      ['GET', '/plants/1', undefined],
      ['GET', '/plants', undefined],
      ['POST', '/plants', { id: 1, name: 'x' }],
      ['PUT', '/plants/1', { name: 'x' }],
      ['PATCH', '/plants/1', { name: 'x' }],
      ['DELETE', '/plants/1', undefined],
    ] as const) {
      const res = await broken.call(method, url, { body });
      const message = assertError(res, 500);
      const requestId = String(res.headers['x-request-id']);
      assert.ok(requestId.length > 0);
      assert.ok(message.includes(requestId), `"${message}" should carry the request id ${requestId}`);
      assert.ok(!res.payload.includes('SELECT') && !res.payload.includes('secret') && !res.payload.includes('.ts:'), res.payload);
      assert.ok(!/\bat\s+\S+\s+\(/.test(res.payload), 'no stack trace');
    }
  });

  it('logs a 500 with its request id and the error, which the answer does not carry', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const stream = { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) };
    const broken = await testApp(after, {
      store: failingStore(() => new Error('disk on fire at /var/lib/db')),
      logger: createLogger('error', stream),
    });
    const res = await broken.call('GET', '/plants/1');
    assertError(res, 500);
    const requestId = String(res.headers['x-request-id']);
    const logged = lines.find((line) => line.reqId === requestId && line.level === 50);
    assert.ok(logged, `an error log line with reqId ${requestId}: ${JSON.stringify(lines)}`);
    assert.match(JSON.stringify(logged.err), /disk on fire/);
    assert.ok(!res.payload.includes('disk on fire'));
  });

  it('a different request id on every request', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) ids.add(String((await t.call('GET', '/healthz')).headers['x-request-id']));
    assert.equal(ids.size, 20);
  });

  it('503 with Retry-After when the store is unavailable', async () => {
    const down = await testApp(after, { store: failingStore(() => new StoreUnavailableError('connection refused to 10.0.0.5:5432')) });
    for (const [method, url, body] of [
      ['GET', '/plants/1', undefined],
      ['POST', '/plants', { id: 1, name: 'x' }],
    ] as const) {
      const res = await down.call(method, url, { body });
      assertError(res, 503, /unavailable/);
      assert.match(String(res.headers['retry-after']), /^\d+$/);
      assert.ok(!res.payload.includes('10.0.0.5'), 'no internal detail');
    }
  });

  it('503 with Retry-After when too many writes already wait for the store (WRITE_QUEUE_LIMIT)', async () => {
    const busy = await testApp(after, { store: failingStore(() => new StoreBusyError(10)) });
    const res = await busy.call('POST', '/plants', { body: { id: 1, name: 'x' } });
    assertError(res, 503, /busy/);
    assert.equal(res.headers['retry-after'], '1');
  });
});
