// Writes packages/client/src/json.ts, the client's `@plant-store/client/json`, from the service's exact JSON
// parser (src/json/exact.ts). `npm run build` runs it before compiling the client package.
// The parser lives in the service, and the client gets a copy, because the service's own package (npm pack at
// the root) must depend on nothing that no registry has: it used to import the parser from the client
// package, a workspace that is never published. One source, so both ends still read JSON by one code.
// The file is written only when its text changes, so that the client's incremental build has nothing to do.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const SOURCE = new URL('../src/json/exact.ts', import.meta.url);
const OUTPUT = new URL('../packages/client/src/json.ts', import.meta.url);
const HEADER = '// Copied by `npm run build` (scripts/client-json.mjs) from src/json/exact.ts: edit that file. Not committed.\n\n';

const text = HEADER + readFileSync(SOURCE, 'utf8');
if (!existsSync(OUTPUT) || readFileSync(OUTPUT, 'utf8') !== text) writeFileSync(OUTPUT, text);
