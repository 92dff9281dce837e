import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { tempDir, TOKEN } from '../helpers.js';
import { npm } from '../npm.js';
import { startServer, type ServerProcess } from '../process.js';

/**
 * The package as someone outside the repository gets it: `npm pack -w @plant-store/client` (the README's
 * command), the tarball installed with npm into an empty project, a small program type-checked against it
 * by the repository's TypeScript (strict, no @types/node, the package's declarations checked too), then
 * compiled and run against a live server started here. openapi-fetch comes from the npm registry, or
 * npm's cache (--prefer-offline).
 */

const execFileAsync = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
/** The modules of the package, each shipped as .js and .d.ts (openapi-types: the generated types). */
const MODULES = ['content', 'event-stream', 'event-types', 'follow', 'index', 'json', 'openapi-types', 'string-end', 'types'];
/** Everything the empty project may hold after the install: the package and openapi-fetch's own two. */
const INSTALLED = ['@plant-store/client', 'openapi-fetch', 'openapi-typescript-helpers'];

/** Runs the repository's tsc on a project (which emits its .js beside its .ts); rejects with tsc's report when it finds errors. */
async function tsc(project: string): Promise<void> {
  await execFileAsync(process.execPath, [TSC, '--pretty', 'false', '-p', project]).catch((error: Error & { stdout?: string }) => {
    throw new Error(`tsc -p ${project} failed:\n${error.stdout ?? error.message}`);
  });
}

/** Every file under a directory, relative to it, sorted. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

/**
 * The consumer's program: every call it makes is typed by the package, and one marked mistake must be a
 * type error (so the types cannot be `any`). It prints what it got, one JSON line per check, with bigints
 * as `<digits>n` strings.
 */
function program(baseUrl: string): string {
  return `import { createClient, type ErrorBody, type Int64 } from '@plant-store/client';
import { parseJson } from '@plant-store/client/json';

const client = createClient({ baseUrl: ${JSON.stringify(baseUrl)}, headers: { Authorization: 'Bearer ${TOKEN}' } });
const show = (value: unknown): string => JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? \`\${v}n\` : v));
const print = (name: string, value: unknown): void => console.log(show({ name, value }));

const id: Int64 = 9223372036854775807n;
const created = await client.POST('/plants', { body: { id, name: 'Monstera', tag: 'tropical' } });
print('created', { status: created.response.status, data: created.data });
await client.POST('/plants', { body: { id: 7, name: 'Ficus' } });

const read = await client.GET('/plants/{id}', { params: { path: { id } } });
if (read.data) print('read', { data: read.data, idType: typeof read.data.id });

const page = await client.GET('/plants', { params: { query: { limit: 10, after: 6 } } });
print('page', page.data?.map((plant) => plant.id));

const patched = await client.PATCH('/plants/{id}', { params: { path: { id } }, body: { tag: null } });
print('patched', patched.data);

const missing = await client.GET('/plants/{id}', { params: { path: { id: 404 } } });
const error: ErrorBody | undefined = missing.error;
print('missing', { status: missing.response.status, error });

const exported = await client.GET('/plants', { params: { query: { format: 'ndjson' } }, parseAs: 'text' });
print('exported', exported.data?.trim().split('\\n').map((line) => parseJson(line)));

/** Never called: its marked mistake must be a type error, so the package's types are real, not any. */
export async function mistake(): Promise<void> {
  // @ts-expect-error -- a misspelt field
  await client.POST('/plants', { body: { id: 8, name: 'Pilea', tga: 'x' } });
}
`;
}

describe('npm pack of @plant-store/client, installed into an empty project', { timeout: 300_000 }, () => {
  const dir = tempDir(after);
  const project = join(dir, 'consumer');
  let tarball: string;
  let packedFiles: string[];
  let server: ServerProcess;

  before(async () => {
    const [packed] = JSON.parse(await npm(['pack', '-w', '@plant-store/client', '--json', '--pack-destination', dir], ROOT)) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    assert.ok(packed);
    tarball = join(dir, packed.filename);
    packedFiles = packed.files.map((file) => file.path).sort();
  });

  it('packs the built modules, their declarations, package.json, README.md and LICENSE: no source, no test, no server code', () => {
    const dist = MODULES.flatMap((name) => [`dist/${name}.d.ts`, `dist/${name}.js`]);
    assert.deepEqual(packedFiles, ['LICENSE', 'README.md', ...dist, 'package.json'].sort());
    assert.match(tarball, /plant-store-client-\d+\.\d+\.\d+\.tgz$/);
  });

  it('installs with npm into an empty project: openapi-fetch and its helper types alone, no install script, nothing native', async () => {
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
    await npm(['install', tarball, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], project);

    const installed = readdirSync(join(project, 'node_modules'), { withFileTypes: true })
      .filter((entry) => !entry.name.startsWith('.'))
      .flatMap((entry) =>
        entry.name.startsWith('@') ? readdirSync(join(project, 'node_modules', entry.name)).map((name) => `${entry.name}/${name}`) : [entry.name],
      )
      .sort();
    assert.deepEqual(installed, INSTALLED);
    for (const name of INSTALLED) {
      const files = filesUnder(join(project, 'node_modules', name));
      assert.ok(!files.some((file) => file.endsWith('.node') || file.endsWith('binding.gyp')), `${name} has native code: ${files.join(', ')}`);
      const { scripts = {} } = JSON.parse(readFileSync(join(project, 'node_modules', name, 'package.json'), 'utf8')) as {
        scripts?: Record<string, string>;
      };
      for (const script of ['preinstall', 'install', 'postinstall']) assert.equal(scripts[script], undefined, `${name} has a ${script} script`);
    }
  });

  it('declares openapi-fetch as its only dependency, and what a package needs: ESM, exports, types, engines, license', () => {
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules', '@plant-store/client', 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    assert.deepEqual(Object.keys(manifest.dependencies as object), ['openapi-fetch']);
    for (const field of ['devDependencies', 'peerDependencies', 'optionalDependencies', 'bundleDependencies', 'bundledDependencies']) {
      assert.equal(manifest[field], undefined, field);
    }
    assert.equal(manifest.name, '@plant-store/client');
    assert.equal(manifest.type, 'module');
    assert.equal(manifest.sideEffects, false);
    assert.equal(manifest.license, 'MIT');
    assert.deepEqual(manifest.engines, { node: '>=20' });
    assert.deepEqual(manifest.exports, {
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
      './json': { types: './dist/json.d.ts', default: './dist/json.js' },
      './package.json': './package.json',
    });
  });

  it('type-checks a strict program against it, which runs against a live server with every id exact', async () => {
    server = await startServer(after, { env: { DATABASE_URL: `file:${join(dir, 'plants.db')}`, PLANT_STORE_TOKENS: TOKEN } });
    writeFileSync(join(project, 'main.ts'), program(server.url));
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        // A consumer's project: strict, Node ESM resolution, no @types/node, and the package's declarations checked too.
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM'],
          types: [],
          strict: true,
          skipLibCheck: false,
        },
        files: ['main.ts'],
      }),
    );
    await tsc(project);
    const { stdout } = await execFileAsync(process.execPath, [join(project, 'main.js')], { cwd: project });
    const results = Object.fromEntries(
      stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { name: string; value: unknown })
        .map(({ name, value }) => [name, value]),
    );
    const big = '9223372036854775807n';
    assert.deepEqual(results, {
      created: { status: 200, data: { name: 'Monstera', tag: 'tropical' } },
      read: { data: { id: big, name: 'Monstera', tag: 'tropical' }, idType: 'bigint' },
      page: [7, big],
      patched: { id: big, name: 'Monstera' },
      missing: { status: 404, error: { error: 404, message: 'no plant with id 404', code: 'not_found' } },
      exported: [
        { id: 7, name: 'Ficus' },
        { id: big, name: 'Monstera' },
      ],
    });
    assert.ok(server.running);
  });
});
