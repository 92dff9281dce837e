import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertError, testApp, TOKEN } from '../helpers.js';
import { portOf, rawExchange } from './raw-exchange.js';
import { listedCodes, operations, urlOf } from './route-table.js';

/**
 * What every operation makes of a request's target and of a body it did not send, held over the served
 * document's table (test/http/route-table.ts), so that a route added later is held to them too:
 * - a query string that is not validly percent-encoded is 400 `invalid_request` naming the parameter,
 *   never read as the text it is (`?q=%zz` once searched for "%zz"); so is a target with a fragment;
 * - an operation that takes no body serves a request that sends none, whatever Content-Type it says
 *   (many HTTP clients say one on every request): a DELETE once answered 400 "Unexpected end of JSON
 *   input" to `Content-Type: application/json`, and 415 to any other type.
 */

describe('every operation: a query string that is not validly percent-encoded is refused', async () => {
  const t = await testApp(after);
  const { operations: list } = await operations(t);

  for (const operation of list) {
    const { method, path } = operation;
    for (const [query, field] of [
      ['q=%zz', 'querystring.q'],
      ['limit=1&q=%', 'querystring.q'],
      ['after=%C3%28', 'querystring.after'],
      ['%E0%A4%A=1', 'querystring'],
    ] as const) {
      it(`${method} ${path}?${query}: 400 invalid_request naming ${field}`, async () => {
        const res = await t.call(method, `${urlOf(operation)}?${query}`, { headers: { 'content-type': 'application/json' }, body: '{}' });
        assertError(res, 400, /is not validly percent-encoded/, 'invalid_request');
        assert.equal(res.json<{ field: string }>().field, field);
        assert.ok(listedCodes(operation, 400).includes('invalid_request'), `${method} ${path} lists invalid_request`);
      });
    }
  }

  it('takes what is validly encoded, UTF-8 and reserved characters included', async () => {
    await t.call('POST', '/plants', { body: { id: 1, name: 'Café & co' } });
    const res = await t.call('GET', `/plants?q=${encodeURIComponent('Café & co')}`);
    assert.equal(res.statusCode, 200, res.payload);
    assert.deepEqual(
      res.json<Array<{ name: string }>>().map((plant) => plant.name),
      ['Café & co'],
    );
    assert.equal((await t.call('GET', '/plants?q=100%25')).statusCode, 200);
  });
});

describe('a request target with a fragment', async () => {
  const t = await testApp(after);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = portOf(t.app.server);

  /** The status and body of one raw request (the server closes after it). */
  const raw = (target: string) =>
    rawExchange(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nConnection: close\r\n\r\n`);

  for (const target of ['/plants/1#x', '/plants#frag', '/plants?limit=2#x', '/nowhere#x']) {
    it(`${target}: 400 invalid_request, not read as a query`, async () => {
      const { status, body } = await raw(target);
      assert.equal(status, 400, body);
      const error = JSON.parse(body) as { code: string; message: string };
      assert.equal(error.code, 'invalid_request');
      assert.match(error.message, /fragment/);
    });
  }

  it('the same targets without the fragment are served', async () => {
    assert.equal((await raw('/plants?limit=2')).status, 200);
    assert.equal((await raw('/plants/1')).status, 404);
  });
});

describe('every operation without a body: a Content-Type with nothing after it is no body', async () => {
  const t = await testApp(after);
  const { operations: list } = await operations(t);
  const bodiless = list.filter((operation) => operation.body === undefined && operation.method !== 'GET');
  assert.ok(bodiless.length >= 4, 'the DELETEs and the bodiless POSTs');

  for (const operation of bodiless) {
    const { method, path } = operation;
    for (const [type, length] of [
      ['application/json', undefined],
      ['application/json', '0'],
      ['application/merge-patch+json', undefined],
      ['text/plain', '0'],
      ['application/x-www-form-urlencoded', undefined],
    ] as const) {
      it(`${method} ${path} with Content-Type ${type}${length === undefined ? '' : ' and Content-Length 0'}: answered as without them`, async () => {
        const headers = { 'content-type': type, ...(length !== undefined && { 'content-length': length }) };
        const sent = await t.call(method, urlOf(operation), { headers });
        // The operation's examples name nothing in this store: each answers as it would without the header.
        const plain = await t.call(method, urlOf(operation));
        assert.equal(sent.statusCode, plain.statusCode, `${sent.payload} against ${plain.payload}`);
        assert.ok(![400, 415].includes(sent.statusCode), sent.payload);
      });
    }
  }

  it('deletes a plant asked with Content-Type: application/json and no body', async () => {
    await t.call('POST', '/plants', { body: { id: 7, name: 'Ivy' } });
    const res = await t.call('DELETE', '/plants/7', { headers: { 'content-type': 'application/json' } });
    assert.equal(res.statusCode, 204, res.payload);
    assert.equal((await t.call('GET', '/plants/7')).statusCode, 404);
  });

  it('still refuses a body it cannot read on such an operation, and an empty body where one is needed', async () => {
    await t.call('POST', '/plants', { body: { id: 8, name: 'Fern' } });
    const typed = await t.call('DELETE', '/plants/8', { headers: { 'content-type': 'text/plain' }, body: 'x' });
    assertError(typed, 415, 'text/plain', 'unsupported_media_type');
    const broken = await t.call('DELETE', '/plants/8', { headers: { 'content-type': 'application/json' }, body: '{' });
    assertError(broken, 400, 'not valid JSON', 'invalid_json');
    assert.equal((await t.call('GET', '/plants/8')).statusCode, 200, 'nothing deleted');
    const empty = await t.call('POST', '/plants', { headers: { 'content-type': 'application/json' } });
    assertError(empty, 400, 'not valid JSON', 'invalid_json');
  });
});
