// Removes from a compiled folder what a deleted source once compiled to:
// `node scripts/prune-outputs.mjs SRC OUT [BUILDINFO]...`.
// tsc builds incrementally (`tsc -b`, each tsconfig keeping its build information in the folder it compiles
// to) and never removes an output: without this, a module deleted from packages/client/src would stay in
// packages/client/dist, and ship with the package. Only compiled files (.js, .d.ts and their maps) are
// looked at; OUT/X.js goes when SRC/X.ts is gone.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const [src, out, ...buildInfo] = process.argv.slice(2);
if (!src || !out) {
  process.stderr.write('usage: node scripts/prune-outputs.mjs SOURCE_DIR OUTPUT_DIR [BUILDINFO_FILE]...\n');
  process.exit(2);
}
const COMPILED = /\.(?:d\.ts|js)(?:\.map)?$/;
/** @type {string[]} */
const names = existsSync(out) ? readdirSync(out, { recursive: true, encoding: 'utf8' }) : [];
const stale = names.filter((name) => COMPILED.test(name) && !existsSync(join(src, name.replace(COMPILED, '.ts'))));
for (const name of stale) {
  rmSync(join(out, name));
  process.stderr.write(`prune-outputs: removed ${join(out, name)} (no ${join(src, name.replace(COMPILED, '.ts'))})\n`);
}
// The build information no longer tells what the folder holds (a source deleted, then put back unchanged,
// would not be compiled again): the next build compiles the folder whole. Build information kept outside
// the folder (dist/src is compiled by two tsconfigs, whose files are in dist/) is named after OUT.
if (stale.length > 0) {
  for (const name of names.filter((n) => n.endsWith('.tsbuildinfo'))) rmSync(join(out, name));
  for (const file of buildInfo) rmSync(file, { force: true });
}
