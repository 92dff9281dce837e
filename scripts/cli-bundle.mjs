// Bundles the command line (dist/src/cli/main.js and every module it reaches, its dependencies included) into
// one file, dist/cli/index.js, which bin/plant-store.js runs for every command but `serve`. A command that
// loads some 470 modules one by one spends about half its CPU resolving, reading and linking them (about
// 0.3 s of 0.6 before it does its work); one file is read and compiled at once. What a command loads on
// demand (a store, its driver) is a file of its own (a chunk) beside it. The server is not bundled: `serve`
// loads dist/src/server.js as it is.
// Left out of the bundle: the two database drivers (better-sqlite3 loads a compiled addon; pg loads pg-native
// if present), loaded from node_modules as the server loads them.
// A bundled module must not find its files from its own import.meta.url, which is the bundle's: src/built.ts
// finds them for it. This script fails when a bundled module of the service uses import.meta.url otherwise.
// A file is written only when its bytes change, so that a build with nothing new writes nothing.
import { build } from 'esbuild';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** @param {string} path */
const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const OUTPUT_DIR = root('dist/cli');
/** The bundled modules of the service allowed import.meta.url: src/built.ts, and src/version.ts, which walks up to package.json. */
const FINDS_FILES = new Set(['dist/src/built.js', 'dist/src/version.js']);

const { outputFiles, metafile } = await build({
  entryPoints: [root('dist/src/cli/main.js')],
  bundle: true,
  write: false,
  metafile: true,
  outdir: OUTPUT_DIR,
  entryNames: 'index',
  // A module the command line imports on demand (a store's, the PostgreSQL driver with it) is a file of its
  // own, read only by a command that needs it.
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['better-sqlite3', 'pg'],
  legalComments: 'eof',
  logLevel: 'warning',
});
const misplaced = Object.keys(metafile.inputs)
  .map((input) => relative(root(''), root(input)))
  .filter((input) => input.startsWith('dist/src/') && !FINDS_FILES.has(input))
  .filter((input) => readFileSync(root(input), 'utf8').includes('import.meta.url'));
if (misplaced.length > 0) {
  throw new Error(
    `cli-bundle: ${misplaced.join(', ')} find files from import.meta.url, which in the bundle is dist/cli/index.js: use builtFile (src/built.ts)`,
  );
}
if (outputFiles.length === 0) throw new Error('cli-bundle: esbuild made no file');
mkdirSync(OUTPUT_DIR, { recursive: true });
const written = new Set(outputFiles.map((file) => file.path));
// A chunk's name holds its content's hash: one the build no longer makes is an old one, removed.
for (const name of readdirSync(OUTPUT_DIR)) {
  if (!written.has(join(OUTPUT_DIR, name))) rmSync(join(OUTPUT_DIR, name), { recursive: true });
}
for (const file of outputFiles) {
  if (!existsSync(file.path) || !readFileSync(file.path).equals(Buffer.from(file.contents))) writeFileSync(file.path, file.contents);
}
