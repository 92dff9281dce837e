import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import Fastify from 'fastify';
import { Type } from '@sinclair/typebox';
import { requireStrictQueries } from '../../src/http/strict-query.js';
import { assertError, testApp } from '../helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the OpenAPI document is walked as plain JSON */
type Json = any;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** A path of the document with its parameters filled in (ids that need not exist: validation comes first). */
function concrete(path: string): string {
  return path.replace('{id}', path.startsWith('/webhooks') ? 'ep_01ARZ3NDEKTSV4RRFFQ69G5FAV' : '1');
}

describe('strict query parameters on every operation of the OpenAPI document', async () => {
  // Load shedding off: the walk sends its requests back to back, and a busy shared machine can stall the loop.
  const t = await testApp(after, { config: { overloadEventLoopDelayMs: 0 } });
  const doc: Json = (await t.call('GET', '/openapi.json', { token: null })).json();
  const operations = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((method) => METHODS.includes(method))
      .map((method) => ({ method: method.toUpperCase() as 'GET', path, op: item[method] })),
  );

  it('walks every operation (plants, webhooks, system)', () => {
    assert.ok(operations.length >= 17, `${operations.length} operations`);
  });

  for (const { method, path, op } of operations) {
    const url = concrete(path);
    it(`${method} ${path} answers 400 naming an unknown query parameter, and accepts each documented one`, async () => {
      assertError(await t.call(method, `${url}?nme=Fern`), 400, 'unknown query parameter "nme"');
      assertError(await t.call(method, `${url}?foo=1&name=Fern`), 400, 'unknown query parameter "foo"; unknown query parameter "name"');
      if (method === 'GET') {
        const head = await t.call('HEAD', `${url}?nme=Fern`);
        assert.equal(head.statusCode, 400, `HEAD ${path}`);
      }
      const documented = (op.parameters as Json[]).filter((p) => p.in === 'query');
      for (const parameter of documented) {
        const res = await t.call(method, `${url}?${parameter.name}=1`);
        assert.doesNotMatch(res.payload, /unknown query parameter/, `${method} ${path} ?${parameter.name}: ${res.payload}`);
      }
    });
  }

  it('the document lists exactly the accepted parameters: GET /plants takes limit, after, cursor, format, id, q, sort and tag', () => {
    const list = doc.paths['/plants'].get.parameters.filter((p: Json) => p.in === 'query').map((p: Json) => p.name);
    assert.deepEqual(list.sort(), ['after', 'cursor', 'format', 'id', 'limit', 'q', 'sort', 'tag']);
    assert.deepEqual(
      doc.paths['/healthz'].get.parameters.filter((p: Json) => p.in === 'query'),
      [],
    );
  });

  it('an unknown parameter changes nothing: a refused write stores nothing', async () => {
    assertError(await t.call('POST', '/plants?dryRun=true', { body: { id: 77, name: 'Fern' } }), 400, 'unknown query parameter "dryRun"');
    const read = await t.call('GET', '/plants/77');
    assert.equal(read.statusCode, 404, read.payload);
  });

  it('the docs page, for browsers and not an operation, is left alone', async () => {
    assert.equal((await t.call('GET', '/docs?utm_source=mail', { token: null })).statusCode, 200);
  });
});

describe('requireStrictQueries', () => {
  it('refuses to register a route whose query schema is not strict', () => {
    const app = Fastify();
    requireStrictQueries(app);
    assert.throws(
      () => app.get('/x', { schema: { querystring: Type.Object({ a: Type.Optional(Type.String()) }) } }, () => 'x'),
      /additionalProperties: false/,
    );
  });
});
