import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { configTable, SETTINGS } from '../src/config/config.js';

test("the README's configuration table is the one made from the settings table (npm run docs rewrites it)", () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const block = /<!-- config:begin[^>]*-->\n([\s\S]*?)\n<!-- config:end -->/.exec(readme);
  assert.ok(block, 'README.md has the config:begin … config:end block');
  assert.equal(block[1], configTable(), 'README.md is out of step with src/config/config.ts: run npm run build && npm run docs');
  for (const setting of Object.values(SETTINGS)) assert.ok(block[1].includes(`\`${setting.env}\``), setting.env);
});
