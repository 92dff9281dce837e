import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers.js';
import { npm } from './npm.js';
import { baseEnv, request, run, waitUntil } from './process.js';

/**
 * The service as it is deployed (docs/production.md): `npm pack` at the root, the tarball installed with
 * `npm install --omit=dev` into an empty folder (no TypeScript, no build step), and `npx plant-store serve`
 * started there, serving a POST. The install takes minutes: better-sqlite3 is compiled for it, as on a
 * server; the other packages come from npm's cache when it has them (--prefer-offline).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A server started by `npx plant-store serve`, in its own process group (npx runs node under it). */
function serve(cwd: string, env: Record<string, string>) {
  const child = spawn('npx', ['--no-install', 'plant-store', 'serve'], {
    cwd,
    env: baseEnv({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // Gone already.
    }
  };
  after(async () => {
    signal('SIGKILL');
    await exited;
  });
  return { output, exited, signal };
}

describe('npm pack of the service, installed with --omit=dev into an empty folder', { timeout: 15 * 60_000 }, () => {
  const dir = tempDir(after);
  const app = join(dir, 'app');
  let tarball: string;
  let packed: string[];

  before(async () => {
    const [result] = JSON.parse(await npm(['pack', '--json', '--pack-destination', dir], ROOT)) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    assert.ok(result);
    tarball = join(dir, result.filename);
    packed = result.files.map((file) => file.path).sort();
  });

  it('packs the compiled service, the command, the docs and the manifest: no TypeScript source, test or client package', () => {
    for (const file of ['package.json', 'README.md', 'bin/plant-store.js', 'dist/src/server.js', 'dist/src/cli/main.js'])
      assert.ok(packed.includes(file), `${file} is packed`);
    // The web console, built and bundled (its UI library and the client inside): nothing to build on the server.
    assert.ok(packed.includes('dist/console/index.html'), 'the console is packed');
    assert.ok(
      packed.some((file) => /^dist\/console\/assets\/console-[\w-]+\.js$/.test(file)),
      'its script is packed',
    );
    // The typed client, bundled (openapi-fetch inside): the CLI reaches a service with it (--url).
    assert.ok(packed.includes('dist/client/index.js'), "the CLI's client is packed");
    // Loaded by path at run time, not imported: the SQLite writer thread and the backup's copy process.
    for (const file of ['dist/src/store/sqlite/writer/worker.js', 'dist/src/store/sqlite/backup/copy-process.js'])
      assert.ok(packed.includes(file), `${file} is packed`);
    const other = packed.filter(
      (file) =>
        !(
          file === 'package.json' ||
          file === 'README.md' ||
          file.startsWith('bin/') ||
          file.startsWith('docs/') ||
          file.startsWith('dist/console/') ||
          file === 'dist/client/index.js' ||
          /^dist\/src\/.*\.js$/.test(file)
        ),
    );
    assert.deepEqual(other, []);
  });

  it('installs with npm install --omit=dev: no TypeScript, no build tool, nothing unpublished', async () => {
    mkdirSync(app);
    await npm(['install', '--omit=dev', tarball, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], app);
    const installed = readdirSync(join(app, 'node_modules'));
    assert.ok(installed.includes('plant-store'), installed.join(', '));
    for (const tool of ['typescript', 'eslint', 'knip', 'openapi-typescript', '@plant-store'])
      assert.ok(!installed.includes(tool), `${tool} is installed: ${installed.join(', ')}`);
    assert.ok(!existsSync(join(app, 'node_modules', '.bin', 'tsc')), 'tsc is installed');
    assert.ok(existsSync(join(app, 'node_modules', '.bin', 'plant-store')), 'the plant-store command is installed');
  });

  it('serves with npx plant-store serve: the first token, a POST stored and read back, a clean stop on SIGTERM', async () => {
    const server = serve(app, { DATABASE_URL: `file:${join(dir, 'data', 'plant-store.db')}` });
    let url: string | undefined;
    await waitUntil(
      () => (url = /Server listening at (http:\/\/[^\s"]+)/.exec(server.output.stdout)?.[1]) !== undefined,
      60_000,
      `the server to listen\nstderr: ${server.output.stderr}`,
    );
    const token = /^ {4}(ps_\S+)$/m.exec(server.output.stderr)?.[1];
    assert.ok(token, server.output.stderr);

    const created = await request(`${url!}/plants`, {
      method: 'POST',
      token,
      body: '{"id": 9007199254740993, "name": "Monstera", "tag": "tropical"}',
    });
    assert.equal(created.status, 200, created.text);
    assert.equal(created.text, '{"name":"Monstera","tag":"tropical"}');
    const read = await request(`${url!}/plants/9007199254740993`, { token });
    assert.equal(read.text, '{"id":9007199254740993,"name":"Monstera","tag":"tropical"}');
    const page = await request(`${url!}/console`);
    assert.equal(page.status, 200, 'the console is served from the installed package');
    // The installed command reaches the service through its API, with the client it ships.
    const listed = await run([join(app, 'node_modules', 'plant-store', 'bin', 'plant-store.js'), 'plants', 'list', '--url', url!], {
      cwd: dir,
      env: { PLANT_STORE_TOKEN: token },
    });
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(listed.stdout, '{"id":9007199254740993,"name":"Monstera","tag":"tropical"}\n');

    server.signal('SIGTERM');
    await server.exited;
    assert.match(server.output.stdout, /"msg":"stopped"/);
  });
});
