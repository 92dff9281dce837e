// Rewrites the configuration reference's table (docs/configuration.md) from the settings table in src/config/config.ts
// (run `npm run build` first). `npm run docs` runs it; test/config/docs.test.ts fails when the page is not in step.
import { readFileSync, writeFileSync } from 'node:fs';
import { configTable } from '../dist/src/config/config.js';

const PAGE = new URL('../docs/configuration.md', import.meta.url);
const BEGIN = '<!-- config:begin (npm run docs writes this table from src/config/config.ts) -->';
const END = '<!-- config:end -->';

const text = readFileSync(PAGE, 'utf8');
const start = text.indexOf(BEGIN);
const end = text.indexOf(END);
if (start === -1 || end === -1 || end < start) throw new Error(`docs/configuration.md has no ${BEGIN} … ${END} block`);
writeFileSync(PAGE, `${text.slice(0, start + BEGIN.length)}\n${configTable()}\n${text.slice(end)}`);
process.stdout.write('docs/configuration.md: configuration table rewritten\n');
