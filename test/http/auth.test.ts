import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { createToken } from '../../src/auth/tokens.js';
import { assertError, testApp, TOKEN } from '../helpers.js';
import { until } from '../toolkit.js';

const REALM = 'Bearer realm="plant-store"';

interface Operation {
  method: InjectOptions['method'];
  url: string;
  body?: unknown;
  write: boolean;
}

/** Every plant operation, with a valid request each. */
const OPERATIONS: Operation[] = [
  { method: 'POST', url: '/plants', body: { id: 1, name: 'x' }, write: true },
  { method: 'GET', url: '/plants', write: false },
  { method: 'GET', url: '/plants/1', write: false },
  { method: 'PUT', url: '/plants/1', body: { name: 'x' }, write: true },
  { method: 'PATCH', url: '/plants/1', body: { tag: 'y' }, write: true },
  { method: 'DELETE', url: '/plants/1', write: true },
];

const label = (op: Operation) => `${op.method} ${op.url}`;

describe('bearer authentication', async () => {
  const t = await testApp(after);
  const readOnly = await t.tokenWith('plants:read');
  const writeOnly = await t.tokenWith('plants:write');
  const readWrite = await t.tokenWith('plants:read', 'plants:write');
  // The plant the operations act on, so that an authorized call is not a 404.
  assert.equal((await t.call('POST', '/plants', { body: { id: 1, name: 'x' } })).statusCode, 200);
  const call = (op: Operation, headers: Record<string, string>, token: string | null = null) =>
    t.call(op.method, op.url, { body: op.body, headers, token });

  for (const op of OPERATIONS) {
    describe(label(op), () => {
      it('401 without an Authorization header, realm only (no error attribute)', async () => {
        const res = await call(op, {});
        assertError(res, 401, /bearer/i);
        assert.equal(res.headers['www-authenticate'], REALM);
      });

      it('401 for another scheme (Basic)', async () => {
        const res = await call(op, { authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` });
        assertError(res, 401, /Bearer/);
        assert.ok(String(res.headers['www-authenticate']).startsWith(REALM));
      });

      for (const header of ['Bearer nope-not-a-token', 'Bearer ', 'Bearer', 'Bearer a b', 'Bearer tok"en', `Bearer ${TOKEN}x`]) {
        it(`401 invalid_token for "${header}"`, async () => {
          const res = await call(op, { authorization: header });
          assertError(res, 401);
          const challenge = String(res.headers['www-authenticate']);
          assert.ok(challenge.startsWith(REALM), challenge);
          assert.match(challenge, /error="invalid_token"/);
        });
      }

      for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
        it(`accepts the scheme name spelled "${scheme}"`, async () => {
          const res = await call(op, { authorization: `${scheme} ${TOKEN}` });
          assert.ok(res.statusCode < 300, `${res.statusCode} ${res.payload}`);
          if (op.method === 'DELETE') await t.call('POST', '/plants', { body: { id: 1, name: 'x' } });
        });
      }

      it(op.write ? '403 insufficient_scope for a read-only token' : 'a read-only token may call it', async () => {
        const res = await call(op, {}, readOnly);
        if (op.write) {
          assertError(res, 403, 'plants:write');
          assert.match(String(res.headers['www-authenticate']), /^Bearer realm="plant-store", error="insufficient_scope"/);
        } else {
          assert.equal(res.statusCode, 200, res.payload);
        }
      });

      it(op.write ? 'a write-only token may call it' : '403 insufficient_scope for a write-only token', async () => {
        const res = await call(op, {}, writeOnly);
        if (op.write) {
          assert.ok(res.statusCode < 300, `${res.statusCode} ${res.payload}`);
          if (op.method === 'DELETE') await t.call('POST', '/plants', { body: { id: 1, name: 'x' } });
        } else {
          assertError(res, 403, 'plants:read');
          assert.match(String(res.headers['www-authenticate']), /error="insufficient_scope"/);
        }
      });

      it('a stored token with both scopes may call it', async () => {
        const res = await call(op, {}, readWrite);
        assert.ok(res.statusCode < 300, `${res.statusCode} ${res.payload}`);
        if (op.method === 'DELETE') await t.call('POST', '/plants', { body: { id: 1, name: 'x' } });
      });
    });
  }

  describe('checked before the body is read', () => {
    for (const op of OPERATIONS.filter((o) => o.body !== undefined)) {
      it(`${label(op)}: 401, not 400, for invalid JSON without a token`, async () => {
        assertError(await t.call(op.method, op.url, { body: '{not json', token: null }), 401);
        assertError(await t.call(op.method, op.url, { body: '{not json', token: 'unknown' }), 401);
      });
      it(`${label(op)}: 401, not 413, for a huge body without a token`, async () => {
        assertError(await t.call(op.method, op.url, { body: `"${'x'.repeat(200 * 1024)}"`, token: null }), 401);
      });
      it(`${label(op)}: 401, not 415, for a text/plain body without a token`, async () => {
        assertError(await t.call(op.method, op.url, { body: 'hello', token: null, headers: { 'content-type': 'text/plain' } }), 401);
      });
      it(`${label(op)}: 403, not 400, for a read-only token with an invalid body`, async () => {
        assertError(await t.call(op.method, op.url, { body: '{not json', token: readOnly }), 403);
      });
    }
    it('401, not 400, for a bad path id without a token', async () => {
      assertError(await t.call('GET', '/plants/abc', { token: null }), 401);
      assertError(await t.call('GET', '/plants?limit=0', { token: null }), 401);
    });
  });

  it('accepts a token created after the app started, at once', async () => {
    const { secret } = await createToken(t.store.tokens, 'late-comer', ['plants:read']);
    assert.equal((await t.call('GET', '/plants', { token: secret })).statusCode, 200);
  });

  it('refuses a revoked token within a second', async () => {
    const { secret, record } = await createToken(t.store.tokens, 'to-revoke', ['plants:read']);
    assert.equal((await t.call('GET', '/plants', { token: secret })).statusCode, 200); // now cached as valid
    assert.equal(await t.store.tokens.revoke(record.id), true);
    // Poll: the cache trusts a valid token for at most TOKEN_CACHE_MS; no timed assertion here.
    const res = await until(async () => {
      const answer = await t.call('GET', '/plants', { token: secret });
      return answer.statusCode !== 200 && answer;
    }, 'the revoked token to be refused');
    assertError(res, 401);
    assert.match(String(res.headers['www-authenticate']), /error="invalid_token"/);
    // And it stays refused.
    assertError(await t.call('GET', '/plants', { token: secret }), 401);
  });

  describe('public routes need no token', () => {
    for (const url of ['/healthz', '/readyz', '/openapi.json']) {
      it(`GET ${url}`, async () => {
        const res = await t.call('GET', url, { token: null });
        assert.equal(res.statusCode, 200, res.payload);
        assert.equal(res.headers['www-authenticate'], undefined);
        // A token, even a bad one, does not hurt.
        assert.equal((await t.call('GET', url, { token: 'whatever' })).statusCode, 200);
      });
    }
  });

  it('never echoes the token in an answer', async () => {
    const secret = 'sEcReT-never-echoed-123';
    const res = await t.call('GET', '/plants', { token: secret });
    assertError(res, 401);
    assert.ok(!res.payload.includes(secret));
    assert.ok(!JSON.stringify(res.headers).includes(secret));
  });
});
