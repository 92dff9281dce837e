// Writes the client package's modules whose one source is in the service, each a copy of a file of src/:
// packages/client/src/json.ts (`@plant-store/client/json`) from the exact JSON parser, src/json/exact.ts;
// event-types.ts from src/model/event-types.ts. `npm run build` runs it before compiling the client package.
// (The Server-Sent Events reader, which the service itself does not read, is the package's own.)
// The sources live in the service, and the client gets copies, because the service's own package (npm pack
// at the root) must depend on nothing that no registry has: it used to import the parser from the client
// package, a workspace that is never published. One source, so both ends read JSON and name event types by
// one code. Each source imports nothing, so its copy stands alone in the package.
// A file is written only when its text changes, so that the client's incremental build has nothing to do.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/** [the service's source, the client package's copy], both under the repository's root. */
const COPIES = [
  ['src/json/exact.ts', 'packages/client/src/json.ts'],
  ['src/model/event-types.ts', 'packages/client/src/event-types.ts'],
];

for (const [source, copy] of COPIES) {
  const output = new URL(`../${copy}`, import.meta.url);
  const header = `// Copied by \`npm run build\` (scripts/client-sources.mjs) from ${source}: edit that file. Not committed.\n\n`;
  const text = header + readFileSync(new URL(`../${source}`, import.meta.url), 'utf8');
  if (/^import\s/m.test(text)) throw new Error(`client-sources: ${source} imports something, which its copy in the client package could not`);
  if (!existsSync(output) || readFileSync(output, 'utf8') !== text) writeFileSync(output, text);
}
