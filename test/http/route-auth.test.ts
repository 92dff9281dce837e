import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { SCOPES, type Scope } from '../../src/model/scopes.js';
import { assertError, testApp, TOKEN } from '../helpers.js';

interface Operation {
  security?: Array<Record<string, string[]>>;
  requestBody?: { content: Record<string, unknown> };
}
interface OpenApiDoc {
  security?: Array<Record<string, string[]>>;
  paths: Record<string, Record<string, Operation>>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/**
 * Walks every operation the OpenAPI document lists. Each one not documented as public (security: [])
 * must refuse a request without a token, with a wrong token and with a token that lacks its scope; the
 * right token gets past authentication, so the refusals are not an accident of a broken route.
 */
describe('every documented operation refuses callers without the right token', async () => {
  const t = await testApp(after);
  const doc = (await t.call('GET', '/openapi.json', { token: null })).json<OpenApiDoc>();
  const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ method: method.toUpperCase() as 'GET', path, op, url: path.replace(/\{[^}]+\}/g, '7') })),
  );

  test('the document lists the plant operations and the public ones', () => {
    assert.ok(operations.length >= 9, `only ${operations.length} operations documented`);
    assert.deepEqual(
      operations
        .filter(({ op }) => op.security?.length === 0)
        .map(({ method, path }) => `${method} ${path}`)
        .sort(),
      ['GET /', 'GET /healthz', 'GET /openapi.json', 'GET /readyz'],
    );
  });

  for (const { method, path, op, url } of operations) {
    const security = op.security ?? doc.security ?? [];
    const body = op.requestBody ? JSON.stringify({ id: 7, name: 'Fern' }) : undefined;
    const headers = op.requestBody ? { 'content-type': 'application/json' } : undefined;
    const send = (token: string | null, extra: Record<string, string> = {}) =>
      t.call(method, url, { token, body, headers: { ...headers, ...extra } });
    const methods = method === 'GET' ? (['GET', 'HEAD'] as const) : ([method] as const);

    if (security.length === 0) {
      test(`${method} ${path} is public: it answers without a token`, async () => {
        const response = await send(null);
        assert.ok(response.statusCode < 400, `${response.statusCode} ${response.payload}`);
      });
      continue;
    }

    const needed = security.flatMap((requirement) => requirement.bearerAuth ?? []) as Scope[];
    // GET /token alone takes any valid token, whatever its scopes (bearerAuth: []): it tells a token what it may do.
    const anyToken = needed.length === 0;
    test(`${method} ${path} needs ${anyToken ? 'a valid token, with any scopes' : needed.join(' ')}`, async () => {
      assert.ok(needed.length > 0 || path === '/token', 'a protected operation documents the scope it needs');
      for (const m of methods) {
        const sendAs = (token: string | null, extra: Record<string, string> = {}) =>
          t.call(m, url, { token, body: m === 'HEAD' ? undefined : body, headers: { ...headers, ...extra } });

        const missing = await sendAs(null);
        assert.equal(missing.statusCode, 401, `${m} ${url} without a token`);
        assert.equal(missing.headers['www-authenticate'], 'Bearer realm="plant-store"');
        if (m !== 'HEAD') assertError(missing, 401);

        for (const wrong of [`${TOKEN}x`, 'x'.repeat(43), `Bearer ${TOKEN}`, TOKEN.slice(0, -1)]) {
          const response = await sendAs(wrong);
          assert.equal(response.statusCode, 401, `${m} ${url} with the wrong token ${wrong}`);
          assert.match(String(response.headers['www-authenticate']), /error="invalid_token"/);
        }
        const otherScheme = await sendAs(null, { authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}` });
        assert.equal(otherScheme.statusCode, 401, `${m} ${url} with Basic credentials`);

        if (anyToken) {
          for (const scope of SCOPES) {
            const one = await sendAs(await t.tokenWith(scope));
            assert.ok(![401, 403].includes(one.statusCode), `${m} ${url} with ${scope}: ${one.statusCode} ${one.payload}`);
          }
          continue;
        }
        const lacking = SCOPES.filter((scope) => !needed.includes(scope));
        assert.ok(lacking.length > 0);
        const weak = await sendAs(await t.tokenWith(...lacking));
        assert.equal(weak.statusCode, 403, `${m} ${url} with only ${lacking.join(' ')}`);
        assert.match(String(weak.headers['www-authenticate']), new RegExp(`error="insufficient_scope", scope="${needed[0]}"`));

        const right = await sendAs(await t.tokenWith(...needed));
        assert.ok(![401, 403].includes(right.statusCode), `${m} ${url} with ${needed.join(' ')}: ${right.statusCode} ${right.payload}`);
      }
    });
  }

  test('a documented path answers no undocumented method', async () => {
    const templates = Object.keys(doc.paths).map((p) => ({ p, pattern: new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`) }));
    for (const path of Object.keys(doc.paths)) {
      const url = path.replace(/\{[^}]+\}/g, '7');
      for (const method of METHODS) {
        if (doc.paths[path]![method]) continue;
        // GET /plants/import is GET /plants/{id} with the id "import": that documented operation answers it.
        if (templates.some(({ p, pattern }) => p !== path && doc.paths[p]![method] && pattern.test(url))) continue;
        const response = await t.call(method.toUpperCase() as 'GET', url, { token: null });
        assertError(response, 405);
      }
    }
  });
});
