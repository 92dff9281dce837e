import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers.js';
import { npm, npmOutput } from '../npm.js';
import { baseEnv, firstToken, request, run } from '../process.js';
import { until } from '../toolkit.js';

/**
 * The service as it is deployed (docs/production.md): `npm pack` at the root, the tarball installed with
 * `npm install --omit=dev` into an empty folder (no TypeScript, no build step), and `npx plant-store serve`
 * started there, serving a POST. The tarball bundles its runtime dependencies, package-lock.json's tree
 * exactly, and the install must put exactly that tree in place, without a warning.
 *
 * A server's install compiles better-sqlite3 from the files the tarball holds (no prebuilt binary is
 * fetched here), minutes of CPU. This test installs with --ignore-scripts instead, checks that the installed
 * better-sqlite3 holds every file of the one this checkout compiled (its sources, binding.gyp, deps/: what
 * the compile reads), and gives it the binary this checkout holds for the running Node (`npm ci` compiled
 * it from the same files with the same scripts; CI's Node 24 leg has just rebuilt it for Node 24).
 * PACKAGE_TEST_COMPILE=1 compiles it in the install instead, as a server does.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const NATIVE_FROM_CHECKOUT = process.env.PACKAGE_TEST_COMPILE !== '1';
const SQLITE_BINARY = join('better-sqlite3', 'build', 'Release', 'better_sqlite3.node');

interface LockEntry {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

/**
 * The tree the tests ran and the tarball bundles, read from package-lock.json: path → version of every
 * package the root's `dependencies` reach (not the development tools, not the client workspace's own), a
 * dependency of the package at P found as Node finds it (P/node_modules/NAME, then the folders above).
 */
function runtimeTreeInLockfile(): Map<string, string> {
  const { packages } = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const found = new Map<string, string>();
  const queue: string[] = [''];
  for (let from = queue.shift(); from !== undefined; from = queue.shift()) {
    const entry = packages[from]!;
    for (const name of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies })) {
      let dir = from;
      let path = `${dir ? `${dir}/` : ''}node_modules/${name}`;
      while (!(path in packages) && dir !== '') {
        dir = dir.includes('/node_modules/') ? dir.slice(0, dir.lastIndexOf('/node_modules/')) : '';
        path = `${dir ? `${dir}/` : ''}node_modules/${name}`;
      }
      // Absent: an optional dependency of another platform, or an optional peer.
      if (!(path in packages) || found.has(path)) continue;
      found.set(path, packages[path]!.version ?? '?');
      queue.push(path);
    }
  }
  return found;
}

interface Manifest {
  version: string;
  engines?: { node?: string };
  scripts?: Record<string, string>;
}

/** Every package in `dir`'s node_modules, nested ones included: its path from `dir` → its package.json. */
function installed(dir: string): Map<string, Manifest> {
  const found = new Map<string, Manifest>();
  const visit = (modules: string) => {
    if (!existsSync(modules)) return;
    for (const name of readdirSync(modules)) {
      if (name.startsWith('.')) continue;
      const folders = name.startsWith('@') ? readdirSync(join(modules, name)).map((inner) => join(name, inner)) : [name];
      for (const folder of folders) {
        const path = join(modules, folder);
        found.set(relative(dir, path), JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as Manifest);
        visit(join(path, 'node_modules'));
      }
    }
  };
  visit(join(dir, 'node_modules'));
  return found;
}

/**
 * npm checks no engines of a bundled package, so this does, as npm does for the others (EBADENGINE), with
 * semver: itself in the runtime tree (better-sqlite3's installer needs it), loaded from the checkout.
 */
const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string, options: { includePrerelease: boolean }): boolean;
};

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
  const bundled = runtimeTreeInLockfile();
  let tarball: string;
  let packed: string[];
  let manifestBefore: string;

  before(async () => {
    manifestBefore = readFileSync(join(ROOT, 'package.json'), 'utf8');
    const [result] = JSON.parse(await npm(['pack', '--json', '--pack-destination', dir], ROOT)) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    assert.ok(result);
    tarball = join(dir, result.filename);
    packed = result.files.map((file) => file.path).sort();
  });

  it('packs the compiled service, the command, the docs, the manifest and the runtime dependencies: no TypeScript source, test or client', () => {
    for (const file of ['package.json', 'README.md', 'bin/plant-store.js', 'dist/src/server.js', 'dist/src/cli/main.js'])
      assert.ok(packed.includes(file), `${file} is packed`);
    // The web console, built and bundled (its UI library and the client inside): nothing to build on the server.
    assert.ok(packed.includes('dist/console/index.html'), 'the console is packed');
    assert.ok(
      packed.some((file) => /^dist\/console\/assets\/console-[\w-]+\.js$/.test(file)),
      'its script is packed',
    );
    // The server and the command line, bundled (each: its modules and dependencies in one file, and the chunks it loads on demand).
    assert.ok(packed.includes('dist/server/index.js'), 'the server is packed');
    assert.ok(packed.includes('dist/cli/index.js'), 'the command line is packed');
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
          /^dist\/(server|cli)\/[\w-]+\.js$/.test(file) ||
          file.startsWith('node_modules/') ||
          /^dist\/src\/.*\.js$/.test(file)
        ),
    );
    assert.deepEqual(other, []);
  });

  it('bundles exactly the runtime tree of package-lock.json, never a development tool, the client package or a build output', () => {
    // A file's package: the deepest node_modules/NAME (or node_modules/@SCOPE/NAME) in its path.
    const packages = new Set(
      packed
        .map((file) => /^((?:node_modules\/(?:@[^/]+\/)?[^/]+\/)*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1])
        .filter((path) => path !== undefined),
    );
    assert.deepEqual([...packages].sort(), [...bundled.keys()].sort());
    for (const tool of ['typescript', 'eslint', 'knip', 'openapi-typescript', 'openapi-fetch', '@plant-store/client'])
      assert.ok(!packages.has(`node_modules/${tool}`), `${tool} is bundled`);
    // better-sqlite3 is compiled where it is installed, for that machine's Node.
    assert.ok(!packed.some((file) => file.startsWith('node_modules/better-sqlite3/build/')), 'a better-sqlite3 build is packed');
  });

  it('leaves the checkout as it was: package.json back, no scratch file left', () => {
    assert.equal(readFileSync(join(ROOT, 'package.json'), 'utf8'), manifestBefore);
    assert.ok(!existsSync(join(ROOT, 'dist', 'pack', 'package.json')));
  });

  it("installs with npm install --omit=dev: the lockfile's tree exactly, no warning, no TypeScript, no build tool", async () => {
    mkdirSync(app);
    const args = ['install', '--omit=dev', tarball, '--no-audit', '--no-fund'];
    const { stderr } = await npmOutput(NATIVE_FROM_CHECKOUT ? [...args, '--ignore-scripts'] : args, app);
    // No engine warning (EBADENGINE), no script the tarball lacks (`prepare`), nothing else either.
    assert.deepEqual(
      stderr.split('\n').filter((line) => /^npm warn/i.test(line)),
      [],
      stderr,
    );
    // The folder holds the service alone; its dependencies are inside it, at the lockfile's paths and versions.
    assert.deepEqual(
      readdirSync(join(app, 'node_modules')).filter((name) => !name.startsWith('.')),
      ['plant-store'],
    );
    const service = join(app, 'node_modules', 'plant-store');
    const tree = installed(service);
    const versions = new Map([...tree].map(([path, manifest]) => [path, manifest.version]));
    assert.deepEqual(new Map([...versions].sort()), new Map([...bundled].sort()));
    for (const [path, manifest] of tree) {
      const range = manifest.engines?.node;
      if (range !== undefined)
        assert.ok(
          semver.satisfies(process.version, range, { includePrerelease: true }),
          `${path}@${manifest.version} wants Node ${range}, this is ${process.version}`,
        );
    }
    const { scripts = {} } = JSON.parse(readFileSync(join(service, 'package.json'), 'utf8')) as Manifest;
    assert.equal(scripts.prepare, undefined, 'the installed package.json names a prepare script');
    // npm's own view of the tree agrees: every dependency met (npm ls fails otherwise).
    await npm(['ls', '--all', '--omit=dev'], app);

    assert.ok(!existsSync(join(app, 'node_modules', '.bin', 'tsc')), 'tsc is installed');
    assert.ok(existsSync(join(app, 'node_modules', '.bin', 'plant-store')), 'the plant-store command is installed');
    const binary = join(service, 'node_modules', SQLITE_BINARY);
    if (NATIVE_FROM_CHECKOUT) {
      // What a server's compile reads is there: every file of the package as the checkout has it, less its build.
      const files = (root: string) =>
        readdirSync(root, { recursive: true, encoding: 'utf8' })
          .filter((f) => !/^build([/]|$)/.test(f))
          .sort();
      const checkout = join(ROOT, 'node_modules', 'better-sqlite3');
      assert.deepEqual(
        files(join(service, 'node_modules', 'better-sqlite3')),
        files(checkout),
        'the installed better-sqlite3 lacks files its compile reads',
      );
      mkdirSync(dirname(binary), { recursive: true });
      copyFileSync(join(ROOT, 'node_modules', SQLITE_BINARY), binary);
    }
    assert.ok(existsSync(binary), 'better-sqlite3 is built');
  });

  it('serves with npx plant-store serve: the first token, a POST stored and read back, a clean stop on SIGTERM', async () => {
    const server = serve(app, { DATABASE_URL: `file:${join(dir, 'data', 'plant-store.db')}` });
    let url: string | undefined;
    await until(
      () => (url = /Server listening at (http:\/\/[^\s"]+)/.exec(server.output.stdout)?.[1]) !== undefined,
      `the server to listen\nstderr: ${server.output.stderr}`,
      { timeoutMs: 60_000 },
    );
    const token = await firstToken(() => server.output.stderr);

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
