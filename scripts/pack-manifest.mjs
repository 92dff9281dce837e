// The tarball's dependencies and manifest: `node scripts/pack-manifest.mjs write` (the end of `prepack`) and
// `node scripts/pack-manifest.mjs restore` (`postpack`).
//
// The tarball installs exactly the dependency tree the tests ran, package-lock.json's: the packed
// package.json bundles the runtime dependencies (`bundleDependencies`, every one of `dependencies`), so
// `npm pack` puts them in the tarball from node_modules, at their lockfile paths, and `npm install <tarball>`
// takes them from there, resolving nothing. (An npm-shrinkwrap.json in the tarball would not do: npm honours
// a dependency's shrinkwrap only when the registry says it has one, never for a tarball file, and
// `overrides` never travel.) The checkout's package.json does not say it: npm would then hold its own
// dependencies for bundled ones, which `npm rebuild better-sqlite3` never selects by name (.ci/node24's
// rebuild for Node 24). `write` checks that node_modules holds that tree, package by package (path and
// version), before it is packed: a node_modules older or newer than package-lock.json stops the pack
// (`npm ci` mends it).
//
// npm packs each bundled package's files as its package.json's `files` lists them (those it was published
// with), leaving out what its install made, such as better-sqlite3's compiled build/, which the server's
// install makes for its own Node; but npm reads the packages from node_modules/.package-lock.json when that
// file is fresh, and a package there has no `files`: then every file in its folder would be packed. `write`
// removes that file (npm's cache of node_modules, which its next install writes again) so that npm reads
// each package.json.
//
// The packed package.json also goes without `scripts.prepare`: in a checkout it builds everything after
// `npm install` (scripts/prepare.mjs), a file the tarball does not contain, and npm names it in the
// install's warning about unreviewed install scripts although it never runs it for a tarball. The
// checkout's package.json is kept in dist/pack/ and put back by `restore` (and by the next `write`, should
// a pack have been killed between the two).
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A package.json, or a lockfile's entry for one: the fields read here.
 * @typedef {{
 *   version?: string,
 *   dependencies?: Record<string, string>,
 *   optionalDependencies?: Record<string, string>,
 *   peerDependencies?: Record<string, string>,
 *   peerDependenciesMeta?: Record<string, { optional?: boolean }>,
 * }} Package
 */

/** @type {(text: string) => Package & { bundleDependencies?: unknown, scripts?: Record<string, string> }} */
const parseManifest = JSON.parse;
/** @type {(text: string) => { lockfileVersion: number, packages: Record<string, Package> }} */
const parseLockfile = JSON.parse;

const LOCKFILE = 'package-lock.json';
const MANIFEST = 'package.json';
const SAVED = 'dist/pack/package.json';
const HIDDEN_LOCKFILE = 'node_modules/.package-lock.json';

const command = process.argv[2];
if (command === 'write') {
  restore();
  write();
} else if (command === 'restore') {
  restore();
} else {
  process.stderr.write('usage: node scripts/pack-manifest.mjs write|restore\n');
  process.exit(2);
}

function restore() {
  if (existsSync(SAVED)) renameSync(SAVED, MANIFEST);
}

function write() {
  const text = readFileSync(MANIFEST, 'utf8');
  const manifest = parseManifest(text);
  if (manifest.bundleDependencies !== undefined) fail(`${MANIFEST} names bundleDependencies: the pack adds them itself`);
  const lock = parseLockfile(readFileSync(LOCKFILE, 'utf8'));
  const root = lock.packages[''];
  if (lock.lockfileVersion < 2 || !root) fail(`${LOCKFILE} is not a lockfile of version 2 or later`);
  const wanted = manifest.dependencies ?? {};
  if (JSON.stringify(sorted(wanted)) !== JSON.stringify(sorted(root.dependencies ?? {})))
    fail(`${LOCKFILE} does not hold ${MANIFEST}'s dependencies: run npm install, then pack`);

  const locked = tree(wanted, LOCKFILE, (path) => (path in lock.packages ? lock.packages[path] : undefined));
  const installed = tree(wanted, 'node_modules', (path) =>
    existsSync(join(path, 'package.json')) ? parseManifest(readFileSync(join(path, 'package.json'), 'utf8')) : undefined,
  );
  const differences = [...new Set([...locked.keys(), ...installed.keys()])]
    .filter((path) => locked.get(path) !== installed.get(path))
    .sort()
    .map((path) => `${path}: ${installed.get(path) ?? 'missing'} in node_modules, ${locked.get(path) ?? 'none'} in ${LOCKFILE}`);
  if (differences.length > 0) fail(`node_modules is not ${LOCKFILE}'s tree (run npm ci, then pack):\n  ${differences.join('\n  ')}`);

  rmSync(HIDDEN_LOCKFILE, { force: true });

  mkdirSync('dist/pack', { recursive: true });
  writeFileSync(SAVED, text);
  const scripts = Object.fromEntries(Object.entries(manifest.scripts ?? {}).filter(([name]) => name !== 'prepare'));
  const packed = { ...manifest, scripts, bundleDependencies: Object.keys(wanted) };
  // Whole or not at all (a rename): other processes read package.json while a pack runs.
  writeFileSync(`${MANIFEST}.pack`, `${JSON.stringify(packed, null, 2)}\n`);
  renameSync(`${MANIFEST}.pack`, MANIFEST);
  process.stderr.write(`pack-manifest: the tarball bundles ${installed.size} packages, as ${LOCKFILE} holds them\n`);
}

/**
 * The runtime tree: the packages the root's `dependencies` reach, path → version, resolved as Node and npm
 * do (a dependency of the package at P is P/node_modules/NAME, or the same name in the folders above P).
 * Peer dependencies are installed by npm too; an optional dependency or peer that is absent (another
 * platform's) is left out.
 * @param {Record<string, string>} dependencies
 * @param {string} where what is read (for messages)
 * @param {(path: string) => Package | undefined} read the package at a path, if any
 */
function tree(dependencies, where, read) {
  /** @type {Map<string, string>} */
  const found = new Map();
  /** @type {Array<[string, Package]>} */
  const queue = [['', { dependencies }]];
  for (let next = queue.shift(); next; next = queue.shift()) {
    const [from, pkg] = next;
    const optional = new Set([
      ...Object.keys(pkg.optionalDependencies ?? {}),
      ...Object.entries(pkg.peerDependenciesMeta ?? {})
        .filter(([, meta]) => meta.optional)
        .map(([name]) => name),
    ]);
    const names = new Set([
      ...Object.keys(pkg.dependencies ?? {}),
      ...Object.keys(pkg.optionalDependencies ?? {}),
      ...Object.keys(pkg.peerDependencies ?? {}),
    ]);
    for (const name of names) {
      const resolved = resolve(from, name, read);
      if (resolved === undefined) {
        if (optional.has(name)) continue;
        fail(`no ${name} for ${from || 'the root'} in ${where}: run npm ci, then pack`);
      }
      const [path, dependency] = resolved;
      if (found.has(path)) continue;
      found.set(path, dependency.version ?? '(no version)');
      queue.push([path, dependency]);
    }
  }
  return found;
}

/**
 * @param {string} from
 * @param {string} name
 * @param {(path: string) => Package | undefined} read
 * @returns {[string, Package] | undefined}
 */
function resolve(from, name, read) {
  for (let dir = from; ;) {
    const path = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    const pkg = read(path);
    if (pkg !== undefined) return [path, pkg];
    if (dir === '') return undefined;
    const at = dir.lastIndexOf('/node_modules/');
    dir = at === -1 ? '' : dir.slice(0, at);
  }
}

/** @param {Record<string, string>} object */
function sorted(object) {
  return Object.fromEntries(Object.entries(object).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * @param {string} message
 * @returns {never}
 */
function fail(message) {
  process.stderr.write(`pack-manifest: ${message}\n`);
  process.exit(1);
}
