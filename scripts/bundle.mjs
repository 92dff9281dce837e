// Bundles what bin/plant-store.js runs, from the compiled modules (dist/src/) and their dependencies:
// - dist/server/index.js: the server (dist/src/server.js), which `plant-store serve` and `npm start` run, as
//   the supervisor and as each of its workers;
// - dist/cli/index.js: the command line (dist/src/cli/main.js), every other command.
// A process that loads some 470 modules one by one spends about half its start resolving, reading and linking
// them: a worker took 1.25–1.33 s of CPU from start to ready, 0.60–0.68 bundled; a command 0.59–0.76 s, 0.25–0.29
// bundled. What is loaded on demand (a store and its driver, the worker's serving code that the supervisor never
// runs, metrics) is a file of its own (a chunk) beside its entry, read only by a process that needs it.
// The threads' and the backup's modules (src/store/sqlite/writer/worker.ts, src/webhooks/delivery-worker.ts,
// src/store/sqlite/backup/copy-process.ts) run from dist/src/ as compiled; so can the server, as the tests
// that build an app in-process do.
// Left out of the bundles: the two database drivers (better-sqlite3 loads a compiled addon; pg loads
// pg-native if present), the readable log format (pino-pretty), OpenTelemetry (loaded only when tracing is
// on) and undici (loaded at a worker's first webhook delivery), loaded from node_modules as the modules load them.
// Dependencies written as CommonJS require Node's modules: each file gets a `require` of its own
// (createRequire). A bundled module must not find its files from its own import.meta.url, which is the
// bundle's: src/built.ts finds them for it, and this script fails when a bundled module of the service uses
// import.meta.url otherwise.
// A file is written only when its bytes change, so that a build with nothing new writes nothing; a file of
// an entry's folder that the build no longer makes (a chunk's name holds its content's hash) is removed.
import { build } from 'esbuild';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** @param {string} path */
const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
/**
 * The modules the server imports on demand, each a chunk of its own, all while a process starts: the
 * configuration, the supervisor's or a worker's code, a store, metrics, tracing. A running process must load
 * no chunk after its start: an upgrade installed in place (before its reload) removes the chunks of the
 * release before, whose names hold their content's hash, and the old supervisor, which runs on across
 * reloads, or an old worker would then find none. A new dynamic import fails the build until it is loaded
 * at start (and listed here) or left out of the bundle, as undici is (the first webhook delivery loads it).
 */
const SERVER_LOADS_AT_START = new Set(
  [
    'config/config',
    'process/supervisor',
    'process/serving',
    'process/protocol',
    'store/sqlite/store',
    'store/postgres/store',
    'metrics/registry',
    'metrics/server',
    'metrics/cluster',
    'metrics/backups',
    'tracing/sdk',
  ].map((name) => `dist/src/${name}.js`),
);
/** Each bundle: its entry module, its folder one below dist/ (where src/built.ts finds the build's files from), and the chunks it may import on demand (any: a command ends). */
const BUNDLES = [
  { entry: 'dist/src/server.js', folder: 'dist/server', onDemand: SERVER_LOADS_AT_START },
  { entry: 'dist/src/cli/main.js', folder: 'dist/cli', onDemand: undefined },
];
/**
 * The bundled modules of the service allowed import.meta.url: src/built.ts; src/version.ts, which walks up to
 * package.json; src/docs/routes.ts, which resolves a package (swagger-ui-dist) from it, found from any folder.
 */
const USES_IMPORT_META = new Set(['dist/src/built.js', 'dist/src/version.js', 'dist/src/docs/routes.js']);
const REQUIRE = "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);";

for (const { entry, folder, onDemand } of BUNDLES) {
  const outdir = root(folder);
  const { outputFiles, metafile } = await build({
    // The metafile's paths are relative to it: dist/src/… as SERVER_LOADS_AT_START names them.
    absWorkingDir: root(''),
    entryPoints: [root(entry)],
    bundle: true,
    write: false,
    metafile: true,
    outdir,
    entryNames: 'index',
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: ['better-sqlite3', 'pg', 'pino-pretty', '@opentelemetry/*', 'undici'],
    banner: { js: REQUIRE },
    legalComments: 'eof',
    logLevel: 'warning',
  });
  const misplaced = Object.keys(metafile.inputs)
    .map((input) => relative(root(''), root(input)))
    .filter((input) => input.startsWith('dist/src/') && !USES_IMPORT_META.has(input))
    .filter((input) => readFileSync(root(input), 'utf8').includes('import.meta'));
  if (misplaced.length > 0) {
    throw new Error(
      `bundle: ${misplaced.join(', ')} use import.meta, which in ${folder} is the bundle's: find a file of the build with builtFile (src/built.ts)`,
    );
  }
  const late = Object.values(metafile.outputs)
    .flatMap((output) => output.imports)
    .filter((imported) => imported.kind === 'dynamic-import' && !imported.external)
    .map((imported) => metafile.outputs[imported.path]?.entryPoint ?? imported.path)
    .filter((module) => onDemand !== undefined && !onDemand.has(module));
  if (late.length > 0) {
    throw new Error(
      `bundle: ${folder} imports ${late.join(', ')} on demand: load it at start (SERVER_LOADS_AT_START) or leave it out of the bundle (external)`,
    );
  }
  if (outputFiles.length === 0) throw new Error(`bundle: esbuild made no file for ${entry}`);
  mkdirSync(outdir, { recursive: true });
  const written = new Set(outputFiles.map((file) => file.path));
  for (const name of readdirSync(outdir)) {
    if (!written.has(join(outdir, name))) rmSync(join(outdir, name), { recursive: true });
  }
  for (const file of outputFiles) {
    if (!existsSync(file.path) || !readFileSync(file.path).equals(Buffer.from(file.contents))) writeFileSync(file.path, file.contents);
  }
}
