import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { SqliteStore } from '../src/store/sqlite/store.js';
import type { ListOptions } from '../src/store/store.js';

/**
 * What one search holds the event loop for, on names made to be costly: `--crafted` names of 120 a's, a
 * b and 120 a's, among `--plants` ordinary ones, with q of 100 characters that every trigram of those
 * names holds, found or not. SQLite reads run on the main thread, so a search's time is the event loop's
 * wait. `--compare=<a checkout>/dist/src/store/sqlite/store.js` measures another build in the same run.
 *
 * npm run bench:crafted -- [--crafted=20000] [--plants=100000] [--compare=…]
 */

const { values } = parseArgs({
  options: {
    crafted: { type: 'string', default: '20000' },
    plants: { type: 'string', default: '100000' },
    compare: { type: 'string' },
  },
});
const CRAFTED = Number(values.crafted);
const PLANTS = Number(values.plants);
const CRAFTED_NAME = `${'a'.repeat(120)}b${'a'.repeat(120)}`;
const QUERIES: Array<[string, Omit<ListOptions, 'limit'>, boolean?]> = [
  ['crafted q found nowhere, sort=id', { q: `${'a'.repeat(49)}b${'a'.repeat(49)}b` }],
  ['crafted q found nowhere, sort=name', { q: `${'a'.repeat(49)}b${'a'.repeat(49)}b`, sort: 'name' }],
  ['crafted q found nowhere, count', { q: `${'a'.repeat(49)}b${'a'.repeat(49)}b` }, true],
  ['crafted q in every crafted name, sort=id', { q: `${'a'.repeat(60)}b${'a'.repeat(39)}` }],
  ['crafted q in every crafted name, count', { q: `${'a'.repeat(60)}b${'a'.repeat(39)}` }, true],
  ['ordinary q (fern), sort=id', { q: 'fern' }],
  ['ordinary q (fern), sort=name', { q: 'fern', sort: 'name' }],
];

type Open = typeof SqliteStore.open;

async function measure(label: string, open: Open): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'crafted-'));
  try {
    const store = open(`file:${join(dir, 'p.db')}`, { synchronous: 'NORMAL', busyTimeoutMs: 5000 });
    const session = await store.plants.startImport();
    for (let i = 0; i < PLANTS; i += 10_000) {
      await session.add(
        Array.from({ length: Math.min(10_000, PLANTS - i) }, (_, j) => ({ id: i + j + 1, name: `plant ${i + j} ${j % 53 === 0 ? 'fern' : 'ivy'}` })),
      );
    }
    for (let i = 0; i < CRAFTED; i += 10_000) {
      await session.add(Array.from({ length: Math.min(10_000, CRAFTED - i) }, (_, j) => ({ id: PLANTS + i + j + 1, name: CRAFTED_NAME })));
    }
    await session.commit({ createOnly: false });
    // Let a store whose index follows the writes catch up first: this measures the index, not its lag.
    const lag = (store as { searchIndex?: { lag(): Promise<{ events: number }> } }).searchIndex;
    if (lag) while ((await lag.lag()).events > 0) await new Promise((r) => setTimeout(r, 100));
    process.stdout.write(`\n${label}: ${PLANTS} plants and ${CRAFTED} crafted names\n`);
    for (const [title, options, count] of QUERIES) {
      const times: number[] = [];
      for (let round = 0; round < 5; round++) {
        const started = performance.now();
        if (count) await store.plants.count(options);
        else await store.plants.page({ ...options, limit: 100 });
        times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      process.stdout.write(`  ${title.padEnd(42)} median ${times[2]!.toFixed(1).padStart(8)} ms, max ${times[4]!.toFixed(1).padStart(8)} ms\n`);
    }
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ours = (await import('../src/store/sqlite/store.js')).SqliteStore.open.bind((await import('../src/store/sqlite/store.js')).SqliteStore);
await measure('this build', ours);
if (values.compare) {
  const other = (await import(pathToFileURL(resolve(values.compare)).href)) as { SqliteStore: { open: Open } };
  await measure(`compared (${values.compare})`, other.SqliteStore.open.bind(other.SqliteStore));
}
