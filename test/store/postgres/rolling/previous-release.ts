import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Release } from './fleet.js';

/**
 * The release before this one, built from git as it was released, to run beside this checkout in the
 * rolling upgrade test (upgrade.process.test.ts). Nothing is fetched: the commit comes from this clone's
 * history (`git archive`), and it is compiled with this checkout's TypeScript and runs on this checkout's
 * node_modules, which holds what it needs when its runtime dependencies are the same (package-lock.json)
 * or, where they differ, when every direct runtime dependency installed here is within the range the
 * release's own package.json asks for (what `npm install` of that release could resolve to today).
 * The build is kept in node_modules/.cache/plant-store-releases/<commit> for the next run.
 *
 * When a release is made, its commit becomes PREVIOUS_RELEASE here (docs/upgrading.md, "Making a release").
 */
export const PREVIOUS_RELEASE = {
  version: '1.0.0',
  commit: '6f10962f9716336522d37b12f86cbf2bc5892844',
  /** 1.0.0 stops at once on SIGTERM: its instances are taken out of the balancer first (docs/upgrading.md). */
  drains: false,
};

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../../../', import.meta.url));
/** What a release's server needs of its tree: its manifest (its version), its sources and their build settings. */
const TREE = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'bin', 'src'];

/** Why the previous release cannot be built here (not a git checkout), or undefined when it can. */
export function previousReleaseUnavailableReason(): string | undefined {
  if (!existsSync(join(ROOT, '.git'))) return `${ROOT} is not a git checkout: the previous release is built from its history`;
  return undefined;
}

/** Builds (or finds built) the release at `commit`: its server.js, ready to run. */
export async function buildRelease(
  commit: string = PREVIOUS_RELEASE.commit,
  drains: boolean = PREVIOUS_RELEASE.drains,
): Promise<Release & { version: string; note: string | undefined }> {
  await git('cat-file', '-e', `${commit}^{commit}`).catch(() => {
    throw new Error(`the previous release's commit ${commit} is not in this clone's history (a shallow clone? git fetch --unshallow)`);
  });
  const cache = join(ROOT, 'node_modules', '.cache', 'plant-store-releases');
  const dir = join(cache, commit);
  const serverJs = join(dir, 'dist', 'src', 'server.js');
  const built = () => {
    const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string };
    return { name: `${version} (${commit.slice(0, 7)})`, serverJs, drains, version, note: readFileSync(join(dir, 'built'), 'utf8') || undefined };
  };
  if (existsSync(join(dir, 'built'))) return built();
  // Built beside, then moved into place whole: an interrupted build is never taken for a finished one.
  const building = `${dir}.${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  try {
    const tar = join(building, 'tree.tar');
    await git('archive', '--format=tar', '-o', tar, commit, ...TREE);
    await run('tar', ['-xf', tar, '-C', building]);
    rmSync(tar);
    const note = dependenciesNote(building);
    symlinkSync(join(ROOT, 'node_modules'), join(building, 'node_modules'), 'dir');
    // --noCheck: the release was type-checked when it was made; this checkout's type packages may be newer.
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    await run(
      process.execPath,
      [tsc, '-p', join(building, 'tsconfig.build.json'), '--noCheck', '--incremental', 'false', '--tsBuildInfoFile', 'null'],
      {
        cwd: building,
        maxBuffer: 16 * 1024 * 1024,
      },
    ).catch((error: { stdout?: string; message: string }) => {
      throw new Error(`compiling the previous release (${commit}) failed: ${error.message}\n${error.stdout ?? ''}`);
    });
    writeFileSync(join(building, 'built'), note ?? '');
    rmSync(dir, { recursive: true, force: true });
    renameSync(building, dir);
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return built();
}

function git(...args: string[]): Promise<{ stdout: string }> {
  return run('git', ['-C', ROOT, ...args], { maxBuffer: 64 * 1024 * 1024 });
}

interface Lockfile {
  packages: Record<string, { version?: string; dev?: boolean; link?: boolean }>;
}

/** The runtime packages a lockfile installs (not marked dev), by path, with their versions. */
function runtimeTree(lockfile: Lockfile): Map<string, string> {
  return new Map(
    Object.entries(lockfile.packages)
      .filter(([path, entry]) => path.startsWith('node_modules/') && entry.dev !== true && !entry.link)
      .map(([path, entry]) => [path, entry.version ?? '']),
  );
}

/**
 * Whether this checkout's node_modules can run the release in `dir`: undefined when their runtime trees
 * are the same; a note naming the differences when they differ but each direct runtime dependency
 * installed here is within the release's range; an error naming the first that is not.
 */
function dependenciesNote(dir: string): string | undefined {
  const read = <T>(path: string) => JSON.parse(readFileSync(path, 'utf8')) as T;
  const theirs = runtimeTree(read<Lockfile>(join(dir, 'package-lock.json')));
  const ours = runtimeTree(read<Lockfile>(join(ROOT, 'package-lock.json')));
  const differ = [...new Set([...theirs.keys(), ...ours.keys()])].filter((path) => theirs.get(path) !== ours.get(path));
  if (differ.length === 0) return undefined;
  const wanted = read<{ dependencies: Record<string, string> }>(join(dir, 'package.json')).dependencies;
  for (const [name, range] of Object.entries(wanted)) {
    const installed = existsSync(join(ROOT, 'node_modules', name, 'package.json'))
      ? read<{ version: string }>(join(ROOT, 'node_modules', name, 'package.json')).version
      : undefined;
    if (installed === undefined || !satisfies(installed, range))
      throw new Error(
        `the previous release asks for ${name}@${range}, and this checkout has ${installed ?? 'none'}: it cannot run on this checkout's node_modules, and the test fetches nothing`,
      );
  }
  const named = differ.map((path) => `${path.slice('node_modules/'.length)} ${theirs.get(path) ?? '-'} -> ${ours.get(path) ?? '-'}`);
  return `runs on this checkout's runtime dependencies, within its package.json's ranges: ${named.join(', ')}`;
}

/** `version` within `range`, for the ranges this project writes: ^x.y.z, ~x.y.z and x.y.z. */
export function satisfies(version: string, range: string): boolean {
  const parse = (text: string) => {
    const found = /^(\d+)\.(\d+)\.(\d+)$/.exec(text);
    return found ? [Number(found[1]), Number(found[2]), Number(found[3])] : undefined;
  };
  const have = parse(version);
  const operator = /^[\^~]/.exec(range)?.[0] ?? '';
  const want = parse(range.slice(operator.length));
  if (!have || !want) return false;
  const [major, minor, patch] = have as [number, number, number];
  const [wantMajor, wantMinor, wantPatch] = want as [number, number, number];
  const atLeast = major > wantMajor || (major === wantMajor && (minor > wantMinor || (minor === wantMinor && patch >= wantPatch)));
  if (operator === '') return major === wantMajor && minor === wantMinor && patch === wantPatch;
  if (!atLeast) return false;
  if (operator === '~') return major === wantMajor && minor === wantMinor;
  // ^: the same leftmost non-zero part.
  if (wantMajor > 0) return major === wantMajor;
  if (wantMinor > 0) return major === 0 && minor === wantMinor;
  return major === 0 && minor === 0 && patch === wantPatch;
}
