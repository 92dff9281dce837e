import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * The house's ladder, read from the sources' own imports: every folder of src/ stands on a floor, and a
 * file imports only from its own floor or the floors below, with no circle anywhere. The domain's words
 * (src/model/) are the ground floor and import nothing of the service; the store stands on them alone.
 */
const FLOORS: readonly (readonly string[])[] = [
  ['model', 'words', 'version', 'built', 'pause', 'net', 'json'],
  ['store'],
  ['config'],
  ['auth', 'logging'],
  ['http'],
  ['plants', 'webhooks', 'events', 'tokens', 'system', 'docs', 'console'],
  ['openapi', 'metrics', 'tracing', 'backups'],
  ['app', 'cli'],
  ['process', 'server'],
];

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** The area of a file: its folder under src/, or its name for a file at the top (server.ts: "server"). */
function areaOf(file: string): string {
  const [first] = relative(SRC, file).split('/');
  return first!.replace(/\.ts$/, '');
}

function floorOf(area: string): number {
  const floor = FLOORS.findIndex((names) => names.includes(area));
  assert.notEqual(floor, -1, `src/${area} stands on no floor of the ladder: place it in FLOORS (test/house.test.ts)`);
  return floor;
}

/** Every relative import of every source file (static, re-exported or dynamic), as absolute .ts paths. */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(SRC, name));
  const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'";]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)|^import\s+['"](\.[^'"]+)['"]/gm;
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((match) =>
      resolve(dirname(file), (match[1] ?? match[2] ?? match[3])!).replace(/\.js$/, '.ts'),
    );
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The import circles: strongly connected groups of more than one file, or a file importing itself (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(relative(SRC, member));
    } while (member !== file);
    if (group.length > 1 || graph.get(file)!.includes(file)) found.push(group.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe('the house', () => {
  const graph = importGraph();

  it('reads the sources and their imports (a sanity check of the reader)', () => {
    assert.ok(graph.size > 100, `${graph.size} source files`);
    const store = graph.get(join(SRC, 'store/plant-store.ts'))!;
    assert.ok(store.includes(join(SRC, 'model/plant-id.ts')), 'store/plant-store.ts imports model/plant-id.ts');
    for (const targets of graph.values()) for (const target of targets) assert.ok(graph.has(target), `${target} exists`);
  });

  it('has no import circle', () => {
    assert.deepEqual(circles(graph), []);
  });

  it('imports only from the same floor or below (model → store → config → auth, logging → http → resources → app → server)', () => {
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      const floor = floorOf(areaOf(file));
      for (const target of targets) {
        if (floorOf(areaOf(target)) > floor) upward.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
      }
    }
    assert.deepEqual(upward, []);
  });

  it('keeps the domain words on the ground: src/model imports nothing of the service but itself', () => {
    const outside = [...graph]
      .filter(([file]) => areaOf(file) === 'model')
      .flatMap(([file, targets]) =>
        targets.filter((target) => areaOf(target) !== 'model').map((target) => `${relative(SRC, file)} -> ${relative(SRC, target)}`),
      );
    assert.deepEqual(outside, []);
  });

  // And the package's version (src/version.ts, on the ground floor): PostgreSQL's registry of processes
  // records the release each runs (store/postgres/instances.ts). And a thread's pause (src/pause.ts): the
  // SQLite store's open waits a few milliseconds between its tries at WAL mode (store/sqlite/open-file.ts).
  it('keeps the store free of the resources, HTTP, auth and configuration: it imports only itself, the model, the version, where the build put a file (built) and a pause', () => {
    const outside = [...graph]
      .filter(([file]) => areaOf(file) === 'store')
      .flatMap(([file, targets]) =>
        targets
          .filter((target) => !['store', 'model', 'version', 'built', 'pause'].includes(areaOf(target)))
          .map((target) => `${relative(SRC, file)} -> ${relative(SRC, target)}`),
      );
    assert.deepEqual(outside, []);
  });

  it('finds an upward import and a circle when there is one (the checks can fail)', () => {
    const a = join(SRC, 'model/a.ts');
    const b = join(SRC, 'model/b.ts');
    assert.deepEqual(
      circles(
        new Map([
          [a, [b]],
          [b, [a]],
        ]),
      ),
      [['model/a.ts', 'model/b.ts']],
    );
    assert.ok(floorOf(areaOf(join(SRC, 'http/x.ts'))) > floorOf(areaOf(join(SRC, 'store/y.ts'))));
  });
});
