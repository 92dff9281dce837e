import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { FastifyRequest } from 'fastify';
import { nextPageLink } from '../src/http/paging.js';
import * as thisBuild from '../src/plants/cursor.js';
import type { CursorScope } from '../src/plants/cursor.js';

/**
 * What a page's cursor costs the main thread (issue 29): encodeCursor, which every page with a next one
 * makes for its Link header, and decodeCursor, which every page asked with a cursor checks, for the scope
 * of the bench's page scenarios (sort=id, no filter) and a search's (q, two tags, sort=name); beside them
 * the whole Link header (nextPageLink with the cursor). In ns per call, the median of 7 rounds, this build
 * and, given --compare=<another checkout's dist/src/plants/cursor.js>, that one, alternately, in one process.
 * Usage: npm run bench:cursor [-- --compare=../main/dist/src/plants/cursor.js]
 */

const { values: options } = parseArgs({ options: { compare: { type: 'string' }, calls: { type: 'string', default: '200000' } } });
const CALLS = Number(options.calls);
const ROUNDS = 7;

type CursorModule = Pick<typeof thisBuild, 'encodeCursor' | 'decodeCursor'>;

const SCOPES: Array<[label: string, scope: CursorScope, key: { id: number; name: string }]> = [
  ['sort=id, no filter (page1k, page1m)', { tags: [], sort: 'id' }, { id: 123_456, name: 'Monstera deliciosa 123456' }],
  [
    'q=Fern&tag=tropical&tag=succulent&sort=name',
    { q: 'Fern', tags: ['tropical', 'succulent'], sort: 'name' },
    { id: 98_765, name: 'Boston fern 98765' },
  ],
];

/** ns per call of fn, over CALLS calls (what it returns is kept, so that nothing is optimized away). */
function time(fn: () => unknown): number {
  const kept: unknown[] = [];
  const started = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) {
    const value = fn();
    if ((i & 1023) === 0) kept.push(value);
  }
  const ns = Number(process.hrtime.bigint() - started) / CALLS;
  if (kept.length === 0) throw new Error('nothing measured');
  return ns;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const builds: Array<[name: string, module: CursorModule]> = [['this build', thisBuild]];
  if (options.compare) builds.push(['compared', (await import(pathToFileURL(resolve(options.compare)).href)) as CursorModule]);
  for (const [label, scope, key] of SCOPES) {
    process.stdout.write(`${label}\n`);
    const cases = builds.flatMap(([name, module]) => {
      const cursor = module.encodeCursor(key, scope);
      const request = { url: `/plants?limit=100&after=${key.id}` } as FastifyRequest;
      return [
        [`${name}: encodeCursor`, () => module.encodeCursor(key, scope)],
        [`${name}: decodeCursor`, () => module.decodeCursor(cursor, scope)],
        [`${name}: Link header (nextPageLink + encodeCursor)`, () => nextPageLink(request, ['cursor', module.encodeCursor(key, scope)])],
      ] as Array<[string, () => unknown]>;
    });
    const results = new Map<string, number[]>(cases.map(([name]) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) for (const [name, fn] of cases) results.get(name)!.push(time(fn));
    for (const [name, ns] of results) process.stdout.write(`  ${name.padEnd(56)} ${median(ns).toFixed(0).padStart(6)} ns/call\n`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:cursor: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
