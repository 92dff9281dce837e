import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { testApp } from '../helpers.js';

/**
 * A HEAD answers what its GET would, without the content (RFC 9110 §9.3.2): the same status and header
 * fields, Content-Length included; a 304 carries none, as its GET's does (§8.6: never one other than the
 * 200's), and a 404's message, and so its length, is the GET's.
 */
describe('HEAD answers as its GET', async () => {
  const t = await testApp(after);
  assert.equal((await t.call('PUT', '/plants/1', { body: { name: 'Fern' } })).statusCode, 201);
  const endpoint = (await t.call('POST', '/webhooks', { body: { url: 'https://93.184.215.14/hook' } })).json<{ id: string }>();

  it('a 304 has no Content-Length, on every read with an ETag, as its GET has none', async () => {
    const reads = [
      '/plants/1',
      '/plants?limit=2',
      '/plants?id=1',
      '/events?limit=2',
      '/webhooks',
      `/webhooks/${endpoint.id}`,
      '/token',
      '/tokens',
      '/openapi.json',
    ];
    for (const url of reads) {
      const etag = String((await t.call('GET', url)).headers.etag);
      const get = await t.call('GET', url, { headers: { 'if-none-match': etag } });
      const head = await t.call('HEAD', url, { headers: { 'if-none-match': etag } });
      assert.deepEqual([get.statusCode, head.statusCode], [304, 304], url);
      assert.equal(get.headers['content-length'], undefined, `GET ${url}`);
      assert.equal(head.headers['content-length'], undefined, `HEAD ${url}: a 304 sends no length rather than a wrong one`);
      assert.equal(head.headers.etag, get.headers.etag, url);
    }
  });

  it('a 200 has the Content-Length of its GET', async () => {
    for (const url of ['/plants/1', '/plants?limit=2', '/openapi.json']) {
      const get = await t.call('GET', url);
      const head = await t.call('HEAD', url);
      assert.equal(head.statusCode, 200, url);
      assert.equal(head.headers['content-length'], get.headers['content-length'], url);
      assert.equal(head.payload, '');
    }
  });

  it('a refusal (404, 405) has the status, headers and Content-Length of its GET', async () => {
    for (const url of ['/nope', '/plants/1/nope', '/webhooks/ep_x/deliveries/x', '/healthz/']) {
      const get = await t.call('GET', url);
      const head = await t.call('HEAD', url);
      assert.ok(get.statusCode >= 400, `${url}: ${get.statusCode}`);
      assert.equal(head.statusCode, get.statusCode, url);
      assert.equal(head.headers['content-length'], get.headers['content-length'], url);
      assert.equal(head.headers.allow, get.headers.allow, url);
    }
  });
});
