import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';

/**
 * The console as `npm run build` bundles it (scripts/build-console.mjs, into dist/console/): small enough
 * to load fast on a slow link, and free of anything the page's CSP would refuse.
 */
const ASSETS = new URL('../../console/assets/', import.meta.url);
const scripts = readdirSync(ASSETS)
  .filter((name) => name.endsWith('.js'))
  .map((name) => ({ name, text: readFileSync(new URL(name, ASSETS)) }));

/** The budget: under 100 KB of JavaScript, gzipped. */
const BUDGET_BYTES = 100 * 1024;

describe('the console bundle', () => {
  it('is one script, under 100 KB gzipped (every script of the page counted)', (context) => {
    assert.equal(scripts.length, 1, scripts.map((s) => s.name).join(', '));
    const gzipped = scripts.reduce((sum, { text }) => sum + gzipSync(text, { level: 9 }).length, 0);
    context.diagnostic(`${gzipped} bytes gzipped (${scripts.reduce((sum, { text }) => sum + text.length, 0)} bytes minified)`);
    assert.ok(gzipped < BUDGET_BYTES, `${gzipped} bytes gzipped: over the budget of ${BUDGET_BYTES}`);
    // A sanity check of the measure: the bundle is minified code, not nothing.
    assert.ok(gzipped > 5000, `${gzipped} bytes gzipped`);
  });

  it('evaluates no text as code (the CSP has no unsafe-eval) and loads nothing from another origin', () => {
    for (const { name, text } of scripts) {
      const code = text.toString('utf8');
      assert.doesNotMatch(code, /\beval\(|\bFunction\(/, name);
      // The only absolute URLs are XML namespace names (Preact's, for SVG and MathML), never fetched.
      const urls = [...code.matchAll(/https?:\/\/[^"'`\s)]+/g)].map((match) => match[0]);
      assert.deepEqual([...new Set(urls)].sort(), [
        'http://www.w3.org/1998/Math/MathML',
        'http://www.w3.org/1999/xhtml',
        'http://www.w3.org/2000/svg',
      ]);
    }
  });
});
