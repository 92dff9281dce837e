import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/**
 * A module of the console's own source (console/src/<path>), bundled by esbuild as scripts/build-console.mjs
 * bundles the console, and imported here, in Node: for the unit tests of the modules that need no DOM (the
 * address's view, the change feed's follower). The console is compiled for browsers by its own tsconfig, not
 * by the tests', so each test states the shape of what it uses (`T`).
 */
export async function consoleModule<T>(path: string): Promise<T> {
  const root = (file: string) => fileURLToPath(new URL(`../../../${file}`, import.meta.url));
  const { outputFiles } = await build({
    entryPoints: [root(`console/src/${path}`)],
    tsconfig: root('console/tsconfig.json'),
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    logLevel: 'warning',
  });
  const code = outputFiles[0]!.text;
  return (await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`)) as T;
}
