/**
 * A file of the build, by its path under dist/: `builtFile('client/index.js')`, `builtFile('src/store/sqlite/writer/worker.js')`.
 * Found from this module's own place, one folder below dist/ (dist/src/built.js), which is also where the
 * bundles of the server and the command line stand (dist/server/, dist/cli/; scripts/bundle.mjs): a module
 * bundled there that found its files from its own import.meta.url would look beside the bundle and miss them.
 */
export function builtFile(path: string): URL {
  return new URL(`../${path}`, import.meta.url);
}
