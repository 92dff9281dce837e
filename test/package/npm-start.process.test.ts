import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, cpSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers.js';
import { baseEnv } from '../process.js';
import { until } from '../toolkit.js';

/**
 * `npm start` builds only what changed (its prestart is `tsc -b tsconfig.build.json`, incremental, and the
 * bundles of the server and the command line, written only when their bytes change): in a
 * copy of the repository's sources, a second start with no change writes nothing into dist/, and a start
 * after one source changed rewrites that module's output, and none of the modules that do not depend on it. Told by the outputs' modification times,
 * not by how long a start takes (the machine is shared and its timings are noise).
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Every file under dist/, with its modification time. */
function outputs(checkout: string): Map<string, number> {
  const dist = join(checkout, 'dist');
  return new Map(
    readdirSync(dist, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => {
        const path = join(entry.parentPath, entry.name);
        return [relative(dist, path), statSync(path).mtimeMs] as const;
      }),
  );
}

/** The files whose modification time differs between two listings (or that only one has). */
function changed(before: Map<string, number>, now: Map<string, number>): string[] {
  const names = new Set([...before.keys(), ...now.keys()]);
  return [...names].filter((name) => before.get(name) !== now.get(name)).sort();
}

/** `npm start` in `checkout` until the server listens, then SIGTERM to its process group and wait for the end. */
async function startOnce(checkout: string): Promise<void> {
  const child = spawn('npm', ['start'], {
    cwd: checkout,
    env: baseEnv({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: `file:${join(checkout, 'data', 'plants.db')}`, LOG_LEVEL: 'info' }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const kill = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // Gone already.
    }
  };
  try {
    await until(() => output.includes('Server listening at') || child.exitCode !== null, 'npm start to listen', { timeoutMs: 300_000 });
    assert.match(output, /Server listening at/, output);
    kill('SIGTERM');
    await exited;
  } finally {
    kill('SIGKILL');
    await exited;
  }
}

describe('npm start', { timeout: 15 * 60_000 }, () => {
  const checkout = join(tempDir(after), 'checkout');
  for (const name of ['src', 'bin', 'scripts', 'package.json', 'tsconfig.json', 'tsconfig.build.json'])
    cpSync(join(ROOT, name), join(checkout, name), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'));

  it('builds the service on its first start, then nothing on a second start with no change', async () => {
    await startOnce(checkout);
    const built = outputs(checkout);
    assert.ok(built.has('src/server.js') && built.has('tsconfig.build.tsbuildinfo'), [...built.keys()].join(', '));
    assert.ok(
      built.has('server/index.js') && built.has('cli/index.js'),
      'the bundles of the server, which it runs, and of the command line are made',
    );
    assert.ok(![...built.keys()].some((name) => name.startsWith('test/') || name.startsWith('packages/')), 'only the service is built');

    await startOnce(checkout);
    assert.deepEqual(changed(built, outputs(checkout)), []);
  });

  it('after a change, rebuilds that module, never one that does not depend on it', async () => {
    const words = join(checkout, 'src', 'words.ts');
    // The first change after a whole build also emits the modules that import the changed one, once: the
    // whole build left their type signatures uncomputed, so tsc cannot yet tell that nothing they see changed.
    const before = outputs(checkout);
    appendFileSync(words, '\n// A change that changes no type.\n');
    await startOnce(checkout);
    const first = changed(before, outputs(checkout));
    assert.ok(first.includes('src/words.js'), first.join(', '));
    for (const unrelated of ['src/model/plant-id.js', 'src/store/sqlite/writer/protocol.js', 'src/version.js'])
      assert.ok(!first.includes(unrelated), `${unrelated} does not import words.ts, and was emitted again`);

    const again = outputs(checkout);
    appendFileSync(words, '// Another.\n');
    await startOnce(checkout);
    assert.deepEqual(
      changed(again, outputs(checkout)).filter((name) => name.startsWith('src/')),
      ['src/words.js', 'src/words.js.map'],
    );
  });
});
