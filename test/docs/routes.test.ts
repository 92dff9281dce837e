import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { SECURITY_HEADERS } from '../../src/http/security.js';
import { assertError, testApp } from '../helpers.js';

const API_CSP = SECURITY_HEADERS['content-security-policy']!;

/** The page's policy as directive → sources. */
function directives(csp: string): Map<string, string[]> {
  return new Map(
    csp
      .split(';')
      .map((directive) => directive.trim().split(/\s+/))
      .map(([name, ...sources]) => [name!, sources]),
  );
}

describe('GET /docs and its files', async () => {
  const t = await testApp(after);
  const page = await t.call('GET', '/docs', { token: null });
  // The files the page loads, as paths: its src and href attributes are relative to /docs.
  const files = [...page.payload.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => new URL(match[1]!, 'http://host/docs').pathname);

  it('is an HTML page, served without a token', () => {
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html; charset=utf-8$/);
    assert.match(page.payload, /<div id="swagger-ui">/);
  });

  it('has a policy of its own that allows only the service itself: no inline code, no eval, no other origin', () => {
    const csp = String(page.headers['content-security-policy']);
    assert.notEqual(csp, API_CSP);
    const policy = directives(csp);
    assert.deepEqual(policy.get('default-src'), ["'none'"]);
    assert.deepEqual(policy.get('script-src'), ["'self'"]);
    assert.deepEqual(policy.get('style-src'), ["'self'"]);
    assert.deepEqual(policy.get('connect-src'), ["'self'"]);
    assert.deepEqual(policy.get('frame-ancestors'), ["'none'"]);
    for (const [name, sources] of policy) {
      for (const source of sources) {
        // data: images are the stylesheet's own icons, inline: no request is made for them.
        const allowed = source === "'self'" || source === "'none'" || (name === 'img-src' && source === 'data:');
        assert.ok(allowed, `${name} ${source}`);
      }
    }
  });

  it('serves every file the page loads, each with its type', async () => {
    assert.deepEqual(files.sort(), ['/docs/favicon.png', '/docs/start.js', '/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css']);
    const types: Record<string, RegExp> = { js: /^text\/javascript; charset=utf-8$/, css: /^text\/css; charset=utf-8$/, png: /^image\/png$/ };
    for (const path of files) {
      const res = await t.call('GET', path, { token: null });
      assert.equal(res.statusCode, 200, path);
      assert.match(String(res.headers['content-type']), types[path.split('.').pop()!]!, path);
      assert.ok(res.rawPayload.length > 0, path);
    }
    assert.match((await t.call('GET', '/docs/swagger-ui-bundle.js', { token: null })).payload, /SwaggerUIBundle/);
    assert.match((await t.call('GET', '/docs/start.js', { token: null })).payload, /startSwaggerUi\(\{"url":"openapi\.json"/);
  });

  it('answers a repeated visit with 304 Not Modified by ETag, and revalidates each time (no-cache)', async () => {
    for (const path of ['/docs', '/docs/swagger-ui-bundle.js']) {
      const first = await t.call('GET', path, { token: null });
      const etag = String(first.headers.etag);
      assert.match(etag, /^"[\w-]{43}"$/);
      assert.equal(first.headers['cache-control'], 'no-cache');
      const again = await t.call('GET', path, { token: null, headers: { 'if-none-match': `"other", ${etag}` } });
      assert.equal(again.statusCode, 304, path);
      assert.equal(again.rawPayload.length, 0);
      assert.equal(again.headers.etag, etag);
      const changed = await t.call('GET', path, { token: null, headers: { 'if-none-match': '"other"' } });
      assert.equal(changed.statusCode, 200, path);
    }
  });

  it('sends /docs/ to /docs (relative, so that it holds under a proxy prefix), keeping the page its own URL', async () => {
    const res = await t.call('GET', '/docs/', { token: null });
    assert.equal(res.statusCode, 301);
    assert.equal(res.headers.location, '../docs');
    assert.equal(new URL(String(res.headers.location), 'http://host/docs/').pathname, '/docs');
    assert.equal((await t.call('GET', '/docs/?x=1', { token: null })).statusCode, 301);
  });

  it('answers a file it does not have 404, in the Error shape', async () => {
    assertError(await t.call('GET', '/docs/swagger-ui.js', { token: null }), 404, '/docs/swagger-ui.js');
    assertError(await t.call('GET', '/docs/../package.json', { token: null }), 404);
  });

  it("leaves every other answer the API's policy, default-src 'none'", async () => {
    const others = [
      await t.call('GET', '/healthz', { token: null }),
      await t.call('GET', '/openapi.json', { token: null }),
      await t.call('GET', '/plants', { token: null }),
      await t.call('GET', '/plants'),
      await t.call('GET', '/docs/unknown', { token: null }),
      await t.call('GET', '/docs/swagger-ui-bundle.js', { token: null }),
    ];
    for (const res of others) assert.equal(res.headers['content-security-policy'], API_CSP, `${res.statusCode} ${res.payload.slice(0, 60)}`);
    assert.match(API_CSP, /^default-src 'none'/);
  });
});
