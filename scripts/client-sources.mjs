// Writes the client package's modules whose one source is in the service, each a copy of a file of src/:
// packages/client/src/json.ts (`@plant-store/client/json`) from the exact JSON parser, src/json/exact.ts;
// with string-end.ts, the one module it imports; event-types.ts from src/model/event-types.ts. `npm run build` runs it before compiling the client package.
// (The Server-Sent Events reader, which the service itself does not read, is the package's own.)
// The sources live in the service, and the client gets copies, because the service's own package (npm pack
// at the root) must depend on nothing that no registry has: it used to import the parser from the client
// package, a workspace that is never published. One source, so both ends read JSON and name event types by
// one code. A source imports nothing but another source copied beside it, so the copies stand alone in the package.
// A file is written only when its text changes, so that the client's incremental build has nothing to do.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/** [the service's source, the client package's copy], both under the repository's root. */
const COPIES = [
  ['src/json/exact.ts', 'packages/client/src/json.ts'],
  ['src/json/string-end.ts', 'packages/client/src/string-end.ts'],
  ['src/model/event-types.ts', 'packages/client/src/event-types.ts'],
];

for (const [source, copy] of COPIES) {
  const output = new URL(`../${copy}`, import.meta.url);
  const header = `// Copied by \`npm run build\` (scripts/client-sources.mjs) from ${source}: edit that file. Not committed.\n\n`;
  const text = header + readFileSync(new URL(`../${source}`, import.meta.url), 'utf8');
  // Only a module copied beside it, by the same name: `import { … } from './string-end.js'`.
  const copied = new Set(COPIES.map(([, to]) => `./${to.split('/').pop().replace(/\.ts$/, '.js')}`));
  for (const [, from] of text.matchAll(/^import\s[^;]*?from\s+'([^']+)'/gm)) {
    if (!copied.has(from)) throw new Error(`client-sources: ${source} imports ${from}, which its copy in the client package could not`);
  }
  if (/^import\s(?![^;]*?from\s+')/m.test(text)) throw new Error(`client-sources: ${source} imports something its copy could not`);
  if (!existsSync(output) || readFileSync(output, 'utf8') !== text) writeFileSync(output, text);
}
