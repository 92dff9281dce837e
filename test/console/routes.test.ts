import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { PAGE_CSP } from '../../src/http/security.js';
import { assertError, testApp } from '../helpers.js';

/** The built console's files (npm run build, which the pretest step runs). */
const ASSETS = readdirSync(new URL('../../console/assets/', import.meta.url));

describe('GET /console: the web console, served by the service itself', async () => {
  const t = await testApp(after);
  const page = await t.call('GET', '/console', { token: null });
  /** Every URL the page names (src and href). */
  const linked = [...page.payload.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((match) => match[1]!);

  it('is public, HTML, revalidated on every visit (no-cache, ETag: 304 when current)', async () => {
    assert.equal(page.statusCode, 200);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(page.headers['cache-control'], 'no-cache');
    const etag = String(page.headers.etag);
    assert.match(etag, /^"[\w-]{43}"$/);
    const again = await t.call('GET', '/console', { token: null, headers: { 'if-none-match': etag } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.payload, '');
    assert.equal((await t.call('GET', '/console', { token: null, headers: { 'if-none-match': '"other"' } })).statusCode, 200);
  });

  it('has a Content-Security-Policy of its own: scripts and styles from the service only, nothing inline, no eval', () => {
    const csp = String(page.headers['content-security-policy']);
    assert.equal(csp, PAGE_CSP);
    const directives = new Map(csp.split('; ').map((d) => [d.split(' ')[0]!, d.split(' ').slice(1)]));
    assert.deepEqual(directives.get('default-src'), ["'none'"]);
    assert.deepEqual(directives.get('script-src'), ["'self'"]);
    assert.deepEqual(directives.get('style-src'), ["'self'"]);
    assert.deepEqual(directives.get('connect-src'), ["'self'"]);
    assert.deepEqual(directives.get('frame-ancestors'), ["'none'"]);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*|https?:/);
  });

  it('names only files of its own, relative to itself (no other origin, no inline script or style)', () => {
    assert.deepEqual(linked.filter((url) => url !== 'data:,' && url !== 'docs').sort(), ASSETS.map((name) => `console/assets/${name}`).sort());
    for (const url of linked) assert.doesNotMatch(url, /^(\/\/|https?:)/);
    assert.doesNotMatch(page.payload, /<script>|<style|style=/);
  });

  it('serves each asset under a name with its content hash, cached for a year and immutable', async () => {
    assert.deepEqual(ASSETS.map((name) => name.replace(/-[A-Z0-9]{8}\./, '-HASH.')).sort(), ['console-HASH.css', 'console-HASH.js']);
    for (const name of ASSETS) {
      const res = await t.call('GET', `/console/assets/${name}`, { token: null });
      assert.equal(res.statusCode, 200, name);
      assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.equal(res.headers['content-type'], name.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.ok(res.payload.length > 1000, `${name}: ${res.payload.length} bytes`);
    }
  });

  it('gzips what it serves for a client that accepts it, and only then', async () => {
    const script = ASSETS.find((name) => name.endsWith('.js'))!;
    const plain = await t.call('GET', `/console/assets/${script}`, { token: null });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, 'Accept-Encoding');
    for (const accepted of ['gzip', 'gzip, deflate, br', 'br;q=1, gzip;q=0.5', '*']) {
      const res = await t.call('GET', `/console/assets/${script}`, { token: null, headers: { 'accept-encoding': accepted } });
      assert.equal(res.headers['content-encoding'], 'gzip', accepted);
      assert.ok(res.rawPayload.length < plain.rawPayload.length / 2);
      assert.deepEqual(gunzipSync(res.rawPayload), plain.rawPayload);
    }
    for (const refused of ['identity', 'gzip;q=0', 'br', 'gzip;q=0.0, deflate', 'gzip;q=0, *', '*, gzip;q=0', '*;q=0']) {
      const res = await t.call('GET', `/console/assets/${script}`, { token: null, headers: { 'accept-encoding': refused } });
      assert.equal(res.headers['content-encoding'], undefined, refused);
      assert.deepEqual(res.rawPayload, plain.rawPayload);
    }
  });

  it('gives the gzip and the plain answer ETags of their own: each revalidates with its own tag only', async () => {
    const script = ASSETS.find((name) => name.endsWith('.js'))!;
    for (const url of ['/console', `/console/assets/${script}`]) {
      const plain = await t.call('GET', url, { token: null });
      const gzipped = await t.call('GET', url, { token: null, headers: { 'accept-encoding': 'gzip' } });
      assert.equal(gzipped.headers['content-encoding'], 'gzip', url);
      assert.notEqual(gzipped.headers.etag, plain.headers.etag, `${url}: two encodings, two strong ETags`);
      for (const [encoding, own, other] of [
        ['identity', plain.headers.etag, gzipped.headers.etag],
        ['gzip', gzipped.headers.etag, plain.headers.etag],
      ] as const) {
        const revalidated = await t.call('GET', url, { token: null, headers: { 'accept-encoding': encoding, 'if-none-match': String(own) } });
        assert.equal(revalidated.statusCode, 304, `${url} ${encoding} with its own tag`);
        const mismatched = await t.call('GET', url, { token: null, headers: { 'accept-encoding': encoding, 'if-none-match': String(other) } });
        assert.equal(mismatched.statusCode, 200, `${url} ${encoding} with the other encoding's tag`);
        assert.equal(mismatched.headers.etag, own);
      }
    }
  });

  it('answers any other path under it with the ordinary 404, and /console/ with a redirect to /console', async () => {
    assertError(await t.call('GET', '/console/assets/console-AAAAAAAA.js', { token: null }), 404, 'no such resource');
    assertError(await t.call('GET', '/console/plants', { token: null }), 404, 'no such resource');
    const slash = await t.call('GET', '/console/', { token: null });
    assert.equal(slash.statusCode, 301);
    assert.equal(slash.headers.location, '../console');
    assertError(await t.call('POST', '/console', { token: null }), 405, 'allowed: GET, HEAD');
  });

  it('is where GET / leads a browser (relative: right behind a proxy prefix too)', async () => {
    const root = await t.call('GET', '/', { token: null, headers: { accept: 'text/html' } });
    assert.equal(root.statusCode, 302);
    assert.equal(root.headers.location, 'console');
  });
});

describe('CONSOLE=off', async () => {
  const t = await testApp(after, { config: { console: false } });

  it('serves no console: /console and its assets are the ordinary 404', async () => {
    assertError(await t.call('GET', '/console', { token: null }), 404, 'no such resource: GET /console');
    for (const name of ASSETS) assertError(await t.call('GET', `/console/assets/${name}`, { token: null }), 404);
  });

  it('leads GET / to the API reference instead', async () => {
    const root = await t.call('GET', '/', { token: null, headers: { accept: 'text/html' } });
    assert.equal(root.statusCode, 302);
    assert.equal(root.headers.location, 'docs');
  });

  it('is read from the environment: on by default, on/off and true/false, anything else stops the start naming CONSOLE', () => {
    assert.equal(loadConfig({}).console, true);
    for (const on of ['on', 'ON', 'true', '1', 'yes']) assert.equal(loadConfig({ CONSOLE: on }).console, true, on);
    for (const off of ['off', 'Off', 'false', '0', 'no']) assert.equal(loadConfig({ CONSOLE: off }).console, false, off);
    assert.throws(
      () => loadConfig({ CONSOLE: 'maybe' }),
      (error: unknown) => error instanceof ConfigError && error.setting === 'CONSOLE' && /must be true or false, got "maybe"/.test(error.message),
    );
  });
});
