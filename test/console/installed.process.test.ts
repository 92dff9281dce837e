import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { install, serve } from '../process/supervised.js';

/**
 * The console of a service whose new release was installed in place (before the reload, or while an old
 * worker still serves the clients it had): the page a worker served names assets it still serves, byte for
 * byte, though the files on disk are another build's. Read as each was first asked for, they were gone: 500.
 */

const BUILT_CONSOLE = fileURLToPath(new URL('../../console/', import.meta.url));

test('a new release installed in place: the assets the page named are still served, as they were', async () => {
  const dir = install(join(tempDir(after), 'install'));
  cpSync(BUILT_CONSOLE, join(dir, 'dist', 'console'), { recursive: true });
  const assets = join(dir, 'dist', 'console', 'assets');
  const before = new Map(readdirSync(assets).map((name) => [name, readFileSync(join(assets, name), 'utf8')]));
  const server = await serve(after, { DATABASE_URL: `file:${join(dir, 'plants.db')}` }, { dir });
  const page = await (await fetch(`${server.url}/console`)).text();
  const named = [...page.matchAll(/assets\/([^"']+)/g)].map((match) => match[1]!);
  assert.deepEqual([...named].sort(), [...before.keys()].sort(), 'the page names every asset');
  // The new release's build: its assets under other names, these removed.
  for (const name of before.keys()) renameSync(join(assets, name), join(assets, `next-${name}`));
  for (const name of named) {
    const response = await fetch(`${server.url}/console/assets/${name}`, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(response.status, 200, name);
    assert.equal(await response.text(), before.get(name), name);
  }
  server.signal('SIGTERM');
  assert.deepEqual(await server.exited, { code: 0, signal: null });
});
