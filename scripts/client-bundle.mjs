// Bundles the built client package (packages/client/dist, openapi-fetch inside) into dist/client/index.js: the
// typed client the command line uses to reach a running service (`plant-store plants list --url …`,
// src/cli/api.ts loads it). The service's tarball ships it, as it ships the console, which bundles the client
// too: an installed service has neither the workspace package nor openapi-fetch, and must depend on nothing
// that no registry has. `npm run build` runs it after compiling the client package.
// The file is written only when its bytes change, so that a build with nothing new writes nothing.
import { build } from 'esbuild';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** @param {string} path */
const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const OUTPUT = root('dist/client/index.js');

const { outputFiles } = await build({
  entryPoints: [root('packages/client/dist/index.js')],
  bundle: true,
  write: false,
  outfile: OUTPUT,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  legalComments: 'eof',
  logLevel: 'warning',
});
const [bundle] = outputFiles;
if (bundle === undefined) throw new Error('client-bundle: esbuild made no file');
if (!existsSync(OUTPUT) || !readFileSync(OUTPUT).equals(Buffer.from(bundle.contents))) {
  mkdirSync(dirname(OUTPUT), { recursive: true });
  writeFileSync(OUTPUT, bundle.contents);
}
