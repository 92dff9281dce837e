import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { assertError, testApp, TOKEN } from '../helpers.js';
import { portOf, rawExchange } from './raw-exchange.js';

/** `cacheControl`: no-store, but for a read that revalidates (test/http/caching.test.ts holds which). */
function assertSecurityHeaders(
  response: LightMyRequestResponse | { headers: Record<string, unknown> },
  what: string,
  cacheControl = 'no-store',
): void {
  const h = response.headers;
  assert.equal(h['x-content-type-options'], 'nosniff', `${what}: nosniff`);
  assert.equal(h['content-security-policy'], "default-src 'none'; frame-ancestors 'none'", `${what}: CSP`);
  assert.equal(h['cache-control'], cacheControl, `${what}: cache-control`);
  assert.equal(h['x-powered-by'], undefined, `${what}: no x-powered-by`);
  assert.equal(h.server, undefined, `${what}: no server header`);
}

describe('security headers', async () => {
  const t = await testApp(after);
  await t.call('POST', '/plants', { body: { id: 1, name: 'Fern' } });

  /** The reads kept and revalidated, and how. */
  const revalidated: Record<string, string> = { 'GET plant 200': 'private, no-cache', 'list 200': 'private, no-cache', openapi: 'no-cache' };
  const cases: Array<[string, () => Promise<LightMyRequestResponse>, number]> = [
    ['POST 200', () => t.call('POST', '/plants', { body: { id: 2, name: 'Ivy' } }), 200],
    ['GET plant 200', () => t.call('GET', '/plants/1'), 200],
    ['list 200', () => t.call('GET', '/plants'), 200],
    ['DELETE 204', () => t.call('DELETE', '/plants/2'), 204],
    ['healthz', () => t.call('GET', '/healthz', { token: null }), 200],
    ['openapi', () => t.call('GET', '/openapi.json', { token: null }), 200],
    ['401', () => t.call('GET', '/plants', { token: null }), 401],
    ['400 validation', () => t.call('POST', '/plants', { body: { id: '1', name: 'x' } }), 400],
    ['400 bad JSON', () => t.call('POST', '/plants', { body: '{"id":' }), 400],
    ['404 plant', () => t.call('GET', '/plants/99'), 404],
    ['404 route', () => t.call('GET', '/nowhere'), 404],
    ['405', () => t.call('OPTIONS', '/plants'), 405],
    ['415', () => t.call('POST', '/plants', { body: 'x', headers: { 'content-type': 'text/plain' } }), 415],
    ['413', () => t.call('POST', '/plants', { body: JSON.stringify({ id: 3, name: 'x'.repeat(70_000) }) }), 413],
    ['bad percent-encoding', () => t.call('GET', '/plants/%zz'), 400],
    ['path parameter too long', () => t.call('GET', `/plants/${'1'.repeat(300)}`), 400],
  ];
  for (const [name, send, status] of cases) {
    test(`${name}: nosniff, a strict CSP, ${revalidated[name] ?? 'no-store'}, no X-Powered-By`, async () => {
      const response = await send();
      assert.equal(response.statusCode, status, response.payload);
      assertSecurityHeaders(response, name, revalidated[name]);
      if (status >= 400) assertError(response, status);
    });
  }

  test('an HTTP request the parser refuses is answered in the Error shape with the same headers', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = portOf(t.app.server);
    const { status, head, body } = await rawExchange(port, 'GET /plants HTTP/1.1\r\nHost: x\r\nBad Header Name: 1\r\n\r\n');
    assert.equal(status, 400);
    assert.match(head, /\r\nx-content-type-options: nosniff\r\n/i);
    assert.match(head, /\r\ncontent-type: application\/json\r\n/i);
    assert.deepEqual(JSON.parse(body), { error: 400, message: 'the request is not valid HTTP/1.1', code: 'invalid_request' });
  });
});

describe('CORS', async () => {
  test('is off by default: no CORS header, a preflight is refused with 405', async () => {
    const t = await testApp(after);
    const simple = await t.call('GET', '/plants', { headers: { origin: 'https://app.example' } });
    assert.equal(simple.statusCode, 200);
    assert.equal(simple.headers['access-control-allow-origin'], undefined);
    const preflight = await t.call('OPTIONS', '/plants', {
      token: null,
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    assertError(preflight, 405);
    assert.equal(preflight.headers['access-control-allow-origin'], undefined);
  });

  describe('with configured origins', async () => {
    const t = await testApp(after, { config: { corsOrigins: ['https://app.example'] } });

    test('an allowed origin may read answers, errors included, and the headers it needs', async () => {
      for (const token of [TOKEN, null]) {
        const response = await t.call('GET', '/plants', { token, headers: { origin: 'https://App.example' } });
        assert.equal(response.headers['access-control-allow-origin'], 'https://App.example');
        // Origin first (CORS's), then what GET /plants varies by (Prefer: count=exact and int64=string).
        assert.equal(response.headers.vary, token === null ? 'Origin, Prefer' : 'Origin, Accept, Prefer');
        const exposed = String(response.headers['access-control-expose-headers']).split(', ');
        for (const header of ['etag', 'link', 'location', 'preference-applied', 'retry-after', 'www-authenticate', 'x-request-id', 'x-total-count']) {
          assert.ok(exposed.includes(header), `${header} is not exposed: ${exposed.join(', ')}`);
        }
        assert.equal(response.headers['access-control-allow-credentials'], undefined);
      }
    });

    test("lets a browser send every header parameter of the document and read every answer's header", async () => {
      /* eslint-disable @typescript-eslint/no-explicit-any -- the OpenAPI document is walked as plain JSON */
      const doc: any = (await t.call('GET', '/openapi.json', { token: null })).json();
      const operations: any[] = Object.values(doc.paths).flatMap((item: any) => Object.values(item));
      const sent = operations.flatMap((op) =>
        (op.parameters ?? []).filter((p: any) => p.in === 'header').map((p: any) => String(p.name).toLowerCase()),
      );
      const answered = operations
        .flatMap((op) => Object.values(op.responses ?? {}).flatMap((r: any) => Object.keys(r.headers ?? {})))
        .map((h) => h.toLowerCase());
      /* eslint-enable @typescript-eslint/no-explicit-any */
      // CORS-safelisted: a browser sends and reads these without being told.
      const safelisted = new Set([
        'accept',
        'accept-language',
        'content-language',
        'cache-control',
        'content-length',
        'content-type',
        'expires',
        'last-modified',
        'pragma',
      ]);
      assert.ok(sent.includes('if-match') && answered.includes('etag'), 'the document has header parameters and answer headers');

      const preflight = await t.call('OPTIONS', '/plants', {
        token: null,
        headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
      });
      const allowed = String(preflight.headers['access-control-allow-headers']).split(', ');
      for (const header of new Set(sent)) if (!safelisted.has(header)) assert.ok(allowed.includes(header), `${header} is not allowed from a browser`);
      const response = await t.call('GET', '/healthz', { token: null, headers: { origin: 'https://app.example' } });
      const exposed = String(response.headers['access-control-expose-headers']).split(', ');
      for (const header of new Set(answered))
        if (!safelisted.has(header)) assert.ok(exposed.includes(header), `${header} is not exposed to a browser`);
    });

    test('another origin gets no CORS header', async () => {
      const response = await t.call('GET', '/plants', { headers: { origin: 'https://evil.example' } });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['access-control-allow-origin'], undefined);
    });

    // The answer depends on Origin (CORS headers or none): a shared cache that kept one kind must not serve
    // it for the other (Fetch, "CORS protocol and HTTP caches"). /openapi.json is storable (no-cache).
    test('every answer says Vary: Origin, to another origin and to a request without one too', async () => {
      for (const origin of [undefined, 'https://evil.example']) {
        for (const [url, token] of [
          ['/openapi.json', null],
          ['/plants', undefined],
          ['/plants', null],
        ] as const) {
          const response = await t.call('GET', url, { token, headers: origin === undefined ? {} : { origin } });
          assert.match(String(response.headers.vary), /(^|, )Origin(,|$)/, `${url} (${origin ?? 'no Origin'}, ${response.statusCode})`);
          assert.equal(response.headers['access-control-allow-origin'], undefined);
        }
      }
    });

    test('a preflight from an allowed origin is answered 204 without a token, with the methods of that path', async () => {
      const response = await t.call('OPTIONS', '/plants/42', {
        token: null,
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'PUT',
          'access-control-request-headers': 'authorization, content-type',
        },
      });
      assert.equal(response.statusCode, 204);
      assert.equal(response.payload, '');
      assert.equal(response.headers['access-control-allow-origin'], 'https://app.example');
      assert.deepEqual(String(response.headers['access-control-allow-methods']).split(', ').sort(), ['DELETE', 'GET', 'HEAD', 'PATCH', 'PUT']);
      const allowed = String(response.headers['access-control-allow-headers']).split(', ');
      // traceparent and tracestate: what a browser app instrumented with OpenTelemetry sends on every request.
      for (const header of ['authorization', 'content-type', 'if-match', 'if-none-match', 'prefer', 'traceparent', 'tracestate']) {
        assert.ok(allowed.includes(header), `${header} is not allowed: ${allowed.join(', ')}`);
      }
      assert.equal(response.headers['access-control-max-age'], '600');
      assertSecurityHeaders(response, 'preflight');
    });

    test('a preflight to a path without routes is 404; from another origin it is the usual 405', async () => {
      const nowhere = await t.call('OPTIONS', '/nowhere', {
        token: null,
        headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
      });
      assertError(nowhere, 404);
      const evil = await t.call('OPTIONS', '/plants', {
        token: null,
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      assertError(evil, 405);
      assert.equal(evil.headers['access-control-allow-origin'], undefined);
    });

    test('a request refused before authentication (a query that does not decode, an Expect) carries the CORS headers', async () => {
      for (const [url, headers, status] of [
        ['/plants?q=100%', {}, 400],
        ['/plants', { expect: 'x-fast-lane' }, 417],
      ] as const) {
        const response = await t.call('GET', url, { headers: { origin: 'https://app.example', ...headers } });
        assertError(response, status);
        assert.equal(response.headers['access-control-allow-origin'], 'https://app.example', url);
      }
    });

    // The router refuses these before any hook runs (http/transport.ts): once without CORS headers at all,
    // so that a browser's page read a network error, its preflight refused 400 too.
    test('a path the router refuses (it does not decode, an id past its longest) carries them too, after a preflight answered 204', async () => {
      for (const [url, code] of [
        ['/plants/%zz', 'invalid_request'],
        ['/plants/%C0%AF', 'invalid_request'],
        [`/plants/${'1'.repeat(300)}`, 'invalid_id'],
      ] as const) {
        const preflight = await t.call('OPTIONS', url, {
          token: null,
          headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
        });
        assert.equal(preflight.statusCode, 204, `${url}: ${preflight.payload}`);
        assert.equal(preflight.headers['access-control-allow-origin'], 'https://app.example', url);
        assert.match(String(preflight.headers['access-control-allow-methods']), /\bGET\b/, url);
        const response = await t.call('GET', url, { headers: { origin: 'https://app.example' } });
        assertError(response, 400, undefined, code);
        assert.equal(response.headers['access-control-allow-origin'], 'https://app.example', url);
        assert.match(String(response.headers['access-control-expose-headers']), /x-request-id/, url);
        assert.match(String(response.headers.vary), /(^|, )Origin(,|$)/, url);
        assertSecurityHeaders(response, url);
        const other = await t.call('GET', url, { headers: { origin: 'https://evil.example' } });
        assert.equal(other.headers['access-control-allow-origin'], undefined, url);
        assert.match(String(other.headers.vary), /(^|, )Origin(,|$)/, url);
      }
    });

    test('an OPTIONS request that is not a preflight is 405 as before', async () => {
      const response = await t.call('OPTIONS', '/plants', { headers: { origin: 'https://app.example' } });
      assertError(response, 405);
    });
  });

  test('* allows any origin, with the same answer for every request: no Origin in Vary', async () => {
    const t = await testApp(after, { config: { corsOrigins: ['*'] } });
    for (const headers of [{ origin: 'https://anyone.example' }, {}] as Array<Record<string, string>>) {
      const response = await t.call('GET', '/plants', { headers });
      assert.equal(response.headers['access-control-allow-origin'], '*', JSON.stringify(headers));
      assert.match(String(response.headers['access-control-expose-headers']), /ratelimit/);
      assert.equal(response.headers.vary, 'Accept, Prefer');
    }
  });
});
