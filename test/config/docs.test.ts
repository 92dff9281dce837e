import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { configTable, SETTINGS } from '../../src/config/config.js';

test("the configuration reference's table is the one made from the settings table (npm run docs rewrites it)", () => {
  const page = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
  const block = /<!-- config:begin[^>]*-->\n([\s\S]*?)\n<!-- config:end -->/.exec(page);
  assert.ok(block, 'docs/configuration.md has the config:begin … config:end block');
  assert.equal(block[1], configTable(), 'docs/configuration.md is out of step with src/config/config.ts: run npm run build && npm run docs');
  for (const setting of Object.values(SETTINGS)) assert.ok(block[1].includes(`\`${setting.env}\``), setting.env);
});
