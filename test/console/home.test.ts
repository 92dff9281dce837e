import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { testApp } from '../helpers.js';

describe('GET /', async () => {
  const t = await testApp(after);

  it('leads a browser to the console (on by default), without a token, by a relative and temporary redirect', async () => {
    const res = await t.call('GET', '/', { token: null });
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, 'console');
    // Relative: under a proxy prefix it stays under the prefix.
    assert.equal(new URL(String(res.headers.location), 'http://host/').pathname, '/console');
    assert.equal(new URL(String(res.headers.location), 'http://host/plant-store/').pathname, '/plant-store/console');
    assert.equal(res.payload, '');
  });

  it('answers HEAD alike, and takes a token too (a browser may send one)', async () => {
    assert.equal((await t.call('HEAD', '/', { token: null })).statusCode, 302);
    assert.equal((await t.call('GET', '/')).statusCode, 302);
  });

  it('is no operation of the API: the OpenAPI document leaves it out', async () => {
    const document = (await t.call('GET', '/openapi.json', { token: null })).json<{ paths: Record<string, unknown> }>();
    assert.equal(document.paths['/'], undefined);
  });

  it('takes GET and HEAD only', async () => {
    assert.equal((await t.call('POST', '/', { token: null })).statusCode, 405);
  });
});
