import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, it, test } from 'node:test';
import { chromium, type ConsoleMessage, type Request } from 'playwright-core';
import { SECURITY_HEADERS } from '../../src/http/security.js';
import { assertError, tempDir, testApp, TOKEN } from '../helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the OpenAPI document is walked as plain JSON */
type Json = any;

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

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing (Debian package chromium; .ci/run installs it)`;
if (skip) process.stderr.write(`\n*** SKIPPING the /docs browser test: ${skip} ***\n\n`);

// Playwright adds --user-data-dir itself, from launchPersistentContext's first argument (a fresh directory).
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** 2^53 + 1: a JS number cannot hold it (JSON.parse reads …992). */
const BIG_ID = '9007199254740993';

test(
  "/docs in Chromium: every operation shown, nothing from another origin, no console error, a request sent from 'Try it out'",
  { skip, timeout: 120_000 },
  async (context) => {
    const t = await testApp(after);
    assert.equal((await t.call('POST', '/plants', { body: `{"id": ${BIG_ID}, "name": "Big leaf"}` })).statusCode, 200);
    const doc: Json = (await t.call('GET', '/openapi.json', { token: null })).json();
    // Every operation, and every webhook event the service sends.
    const summaries: string[] = [...Object.values(doc.paths), ...Object.values(doc.webhooks ?? {})].flatMap((item: Json) =>
      Object.values(item).map((op: Json) => op.summary as string),
    );
    assert.ok(Object.keys(doc.webhooks).length === 3, 'the document has the three webhook events');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;

    const dir = tempDir(after);
    const browser = await chromium.launchPersistentContext(join(dir, 'profile'), { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
    after(() => browser.close());
    const requests: string[] = [];
    const errors: string[] = [];
    browser.on('request', (request: Request) => requests.push(request.url()));
    const page = await browser.newPage();
    page.on('console', (message: ConsoleMessage) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));

    await page.goto(`${origin}/docs`);
    const shown = page.locator('.opblock-summary-description');
    await shown.nth(summaries.length - 1).waitFor();
    assert.deepEqual((await shown.allInnerTexts()).sort(), [...summaries].sort());
    await page.getByText('Schemas', { exact: true }).waitFor();

    // Authorize with the token, then read the big plant from its operation's console.
    await page.locator('.auth-wrapper button.authorize').click();
    await page.locator('.auth-container input').fill(TOKEN);
    await page.locator('.auth-btn-wrapper button.authorize').click();
    await page.locator('.auth-btn-wrapper button.btn-done').click();
    const getPlant = page.locator('.opblock', { has: page.getByText(doc.paths['/plants/{id}'].get.summary, { exact: true }) });
    await getPlant.locator('.opblock-summary').click();
    await getPlant.getByRole('button', { name: 'Try it out' }).click();
    await getPlant.locator('input[placeholder="id"]').fill(BIG_ID);
    await getPlant.getByRole('button', { name: 'Execute' }).click();
    const answer = getPlant.locator('.live-responses-table tbody tr.response');
    await answer.waitFor();
    assert.equal((await answer.locator('.response-col_status').innerText()).trim(), '200');
    const body = await answer.locator('.response-col_description pre').first().innerText();
    assert.match(body, new RegExp(`"id": ${BIG_ID}\\b`), 'the id as the service sent it, not rounded');
    assert.deepEqual(JSON.parse(body.replace(BIG_ID, '0')), { id: 0, name: 'Big leaf' });

    const screenshot = join(dir, 'docs.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    assert.deepEqual([...readFileSync(screenshot).subarray(1, 4)], [...Buffer.from('PNG')]);
    context.diagnostic(`screenshot: ${screenshot} (removed when the test file ends)`);

    assert.ok(requests.includes(`${origin}/openapi.json`), requests.join('\n'));
    assert.ok(requests.includes(`${origin}/plants/${BIG_ID}`), requests.join('\n'));
    for (const url of requests) assert.equal(new URL(url).origin, origin, `a request left the origin: ${url}`);
    assert.deepEqual(errors, []);
  },
);
