// `npm test`: node's test runner over every test, the full tier.
// `npm run test:unit` (`--unit`): the fast tier: the in-process tests, less the slow ones marked in
// test/tier.ts (fuzzing, large data), which it skips with their reason; the runner tells them so by
// PLANT_STORE_TEST_TIER=unit. The process tests (*.process.test.ts) are left out: they start a server, the
// CLI, a PostgreSQL cluster or a browser as processes of their own.
// `--in-process`: every in-process test, the slow ones included (CI's Node 24 leg).
//
// The tests are their sources, test/**/*.test.ts, each run compiled (dist/test/**/*.test.js, by the pretest
// step). The build is incremental (`tsc -b`) and never removes an output: listing the sources keeps a compiled
// test whose source is gone from running. A source not compiled is an error, not a test left out.
// The files are listed here because the runner's arguments changed meaning: Node 20 searches a directory
// given to it, while Node 22 and later read each argument as a glob pattern and look a directory up as a
// file (so `node --test dist/test/` fails there). Files named *.test.ts only: helpers are not tests.
// The files run two at a time through node:test's run(), in this order: the few that take minutes first (LONGEST,
// below), then the rest by name. `node --test` sorts the files it is given, and the longest of them, started
// late, ran alone at the end of the run with the other core idle. Two runner arguments are taken:
// `--test-reporter=NAME` (tap, spec, dot, junit; `npm test -- --test-reporter=dot`) and
// `--test-name-pattern=PATTERN` (repeatable); any other is refused.
// A test that needs what this machine lacks (a tool, PostgreSQL, Chromium, root) is skipped here, and the
// run ends with the list of those (test/toolkit.ts, `needs`); with PLANT_STORE_TEST_MISSING=fail (CI sets
// it in .ci/run) each of them fails the run instead.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { run } from 'node:test';
import { dot, junit, spec, tap } from 'node:test/reporters';

const SOURCES = 'test';
const COMPILED = 'dist/test';
const TIER_ENV = 'PLANT_STORE_TEST_TIER';
const args = process.argv.slice(2);
const unit = args.includes('--unit');
const inProcessOnly = unit || args.includes('--in-process');
const runnerArgs = args.filter((arg) => arg !== '--unit' && arg !== '--in-process');
/** The files that take minutes (CI's logs, 2026-12-01: 290, 280, 70, 65, 55 s...), started first; each must exist. */
const LONGEST = [
  'store/postgres/http.process.test.ts',
  'plants/import.process.test.ts',
  'package/npm-pack.process.test.ts',
  'reliability/crash-postgres.process.test.ts',
  'process/reload.process.test.ts',
  'reliability/failover-postgres.process.test.ts',
  'package/npm-start.process.test.ts',
  'reliability/failover-pg-auto-failover.process.test.ts',
  'store/postgres/rolling/upgrade.process.test.ts',
];
/** node:test's reporters by name: spec is a stream made anew, the others transform the events as they come. */
const REPORTERS = {
  tap: () => tap,
  dot: () => dot,
  junit: () => junit,
  spec: () => new spec(),
};
/** @type {{ reporter: keyof typeof REPORTERS, patterns: RegExp[] }} */
const chosen = { reporter: process.stdout.isTTY ? 'spec' : 'tap', patterns: [] };
for (const arg of runnerArgs) {
  const [name, value] = arg.split(/=(.*)/s);
  if (name === '--test-reporter' && (value === 'tap' || value === 'dot' || value === 'junit' || value === 'spec')) chosen.reporter = value;
  else if (name === '--test-name-pattern' && value !== undefined) chosen.patterns.push(new RegExp(value));
  else {
    process.stderr.write(`run-tests: ${arg}: not taken (--unit, --in-process, --test-reporter=NAME, --test-name-pattern=PATTERN)\n`);
    process.exit(1);
  }
}
/** @type {string[]} */
const names = readdirSync(SOURCES, { recursive: true, encoding: 'utf8' });
const unknown = LONGEST.filter((name) => !names.includes(join(name)));
if (unknown.length > 0) {
  process.stderr.write(`run-tests: LONGEST names files that do not exist (renamed?): ${unknown.join(', ')}\n`);
  process.exit(1);
}
const rank = (/** @type {string} */ name) => (LONGEST.includes(name) ? LONGEST.indexOf(name) : LONGEST.length);
const files = names
  .filter((name) => name.endsWith('.test.ts') && !(inProcessOnly && name.endsWith('.process.test.ts')))
  .sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0))
  .map((name) => join(COMPILED, name.replace(/\.ts$/, '.js')));
const missing = files.filter((file) => !existsSync(file));
if (files.length === 0 || missing.length > 0) {
  const what = files.length === 0 ? `no *.test.ts file under ${SOURCES}` : `not compiled: ${missing.join(', ')}`;
  process.stderr.write(`run-tests: ${what}: run npm test (its pretest compiles them)\n`);
  process.exit(1);
}
// Set either way, so that a PLANT_STORE_TEST_TIER left in the environment never thins `npm test`.
const skipsDir = mkdtempSync(join(tmpdir(), 'plant-store-test-skips-'));
const skipsFile = join(skipsDir, 'skips.jsonl');
// The test files' processes inherit this process's environment.
process.env[TIER_ENV] = unit ? 'unit' : 'full';
process.env.PLANT_STORE_TEST_SKIPS = skipsFile;
let failures = 0;
const stream = run({ files, concurrency: 2, ...(chosen.patterns.length > 0 && { testNamePatterns: chosen.patterns }) });
// A failing todo test fails nothing, as with `node --test`.
stream.on('test:fail', (/** @type {{ todo?: unknown }} */ event) => {
  if (event.todo === undefined || event.todo === false) failures++;
});
// eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- compose's types infer nothing from a union of a stream and a generator function
const report = /** @type {import('node:stream').Readable} */ (stream.compose(REPORTERS[chosen.reporter]()));
report.pipe(process.stdout);
await finished(report);
/** Each line of the skips file: test/toolkit.ts, needs. */
/** @type {(line: string) => { file: string, what: string, missing: string, failing: boolean }} */
const parseSkip = JSON.parse;
const skipped = existsSync(skipsFile)
  ? readFileSync(skipsFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => parseSkip(line))
  : [];
rmSync(skipsDir, { recursive: true, force: true });
if (skipped.length === 0) {
  process.stdout.write('\nrun-tests: no test was skipped for a missing dependency or privilege\n');
} else {
  const failing = skipped.some((skip) => skip.failing);
  process.stdout.write(
    `\nrun-tests: ${skipped.length} test group(s) ${failing ? 'FAILED' : 'skipped'} for a missing dependency or privilege` +
      `${failing ? ' (PLANT_STORE_TEST_MISSING=fail)' : ' (CI fails on these: .ci/run sets PLANT_STORE_TEST_MISSING=fail)'}:\n` +
      skipped.map((skip) => `  ${skip.file}: ${skip.what}: ${skip.missing}\n`).join(''),
  );
}
process.exit(failures > 0 ? 1 : 0);
