import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertError, testApp, TOKEN } from '../helpers.js';

const NOT_TAKEN = 'only GET /events takes the token as access_token in the query string (for EventSource); send Authorization: Bearer <token>';

describe('access_token sent to an operation that does not take it', async () => {
  const t = await testApp(after);

  it('without a header: 401 that says where the token goes, not only that it is missing', async () => {
    for (const [method, url] of [
      ['GET', `/plants?access_token=${TOKEN}`],
      ['GET', `/plants/1?access_token=${TOKEN}`],
      ['DELETE', `/plants/1?access_token=${TOKEN}`],
      ['GET', `/webhooks?access_token=${TOKEN}`],
      ['GET', '/plants?limit=5&access_token='],
    ] as const) {
      const res = await t.call(method, url, { token: null });
      assert.equal(assertError(res, 401), `missing bearer token: ${NOT_TAKEN}`, `${method} ${url}`);
      // No token the operation takes was sent: no error code in the challenge (RFC 6750 §3.1).
      assert.equal(res.headers['www-authenticate'], 'Bearer realm="plant-store"');
    }
  });

  it('with a header too: 400 naming the parameter and saying where the token goes', async () => {
    assert.equal(assertError(await t.call('GET', `/plants?access_token=${TOKEN}`), 400), `unknown query parameter "access_token": ${NOT_TAKEN}`);
    assert.equal(
      assertError(await t.call('GET', '/healthz?access_token=x', { token: null }), 400),
      `unknown query parameter "access_token": ${NOT_TAKEN}`,
    );
  });

  it('another unknown parameter keeps its plain message; a request without either is the usual 401', async () => {
    assert.equal(assertError(await t.call('GET', '/plants?token=x'), 400), 'unknown query parameter "token"');
    assert.equal(assertError(await t.call('GET', '/plants', { token: null }), 401), 'missing bearer token: send Authorization: Bearer <token>');
  });

  it('GET /events still takes it (from a token limited to events:read, as every access_token must be)', async () => {
    const reader = await t.tokenWith('events:read');
    const res = await t.call('GET', `/events?access_token=${reader}`, { token: null });
    assert.equal(res.statusCode, 200, res.payload);
  });
});
