// Builds the web console (console/, served at /console by src/console/routes.ts) into dist/console/: its page,
// index.html, and its script and style sheet under assets/, each named by a hash of its content, so that a
// browser may keep them for good (a change makes a new name). `npm run build` runs it last: the console
// bundles the typed client, @plant-store/client, which the build compiles just before.
// esbuild bundles and minifies only; `npm run check` type-checks the console (console/tsconfig.json).
import { build } from 'esbuild';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

/** @param {string} path */
const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const OUT = root('dist/console');
/** Where the page finds its assets, relative to its own URL (/console): behind a proxy's prefix too. */
const ASSETS_URL = 'console/assets';

rmSync(OUT, { recursive: true, force: true });
const { metafile } = await build({
  entryPoints: { console: root('console/src/main.tsx') },
  tsconfig: root('console/tsconfig.json'),
  outdir: `${OUT}/assets`,
  entryNames: '[name]-[hash]',
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome111', 'firefox115', 'safari16.4'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'eof',
  metafile: true,
  logLevel: 'warning',
});

const [script, output] = Object.entries(metafile.outputs).find(([, out]) => out.entryPoint !== undefined) ?? [];
if (script === undefined || output.cssBundle === undefined) throw new Error('build-console: esbuild made no script or no style sheet');
/** @param {string} path */
const asset = (path) => `${ASSETS_URL}/${basename(path)}`;

// No inline script or style: the page's Content-Security-Policy allows only files of the service itself.
// The empty data: icon keeps browsers from asking for /favicon.ico.
const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Plant Store console</title>
    <link rel="icon" href="data:,">
    <link rel="stylesheet" href="${asset(output.cssBundle)}">
    <script type="module" src="${asset(script)}"></script>
  </head>
  <body>
    <div id="app"></div>
    <noscript><p>The Plant Store console needs JavaScript. The API reference is at <a href="docs">/docs</a>.</p></noscript>
  </body>
</html>
`;
mkdirSync(OUT, { recursive: true });
writeFileSync(`${OUT}/index.html`, page);
