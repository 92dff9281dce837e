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
// Other arguments go to the runner (`npm test -- --test-reporter=dot`).
// A test that needs what this machine lacks (a tool, PostgreSQL, Chromium, root) is skipped here, and the
// run ends with the list of those (test/toolkit.ts, `needs`); with PLANT_STORE_TEST_MISSING=fail (CI sets
// it in .ci/run) each of them fails the run instead.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SOURCES = 'test';
const COMPILED = 'dist/test';
const TIER_ENV = 'PLANT_STORE_TEST_TIER';
const args = process.argv.slice(2);
const unit = args.includes('--unit');
const inProcessOnly = unit || args.includes('--in-process');
const runnerArgs = args.filter((arg) => arg !== '--unit' && arg !== '--in-process');
/** @type {string[]} */
const names = readdirSync(SOURCES, { recursive: true, encoding: 'utf8' });
const files = names
  .filter((name) => name.endsWith('.test.ts') && !(inProcessOnly && name.endsWith('.process.test.ts')))
  .sort()
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
const env = { ...process.env, [TIER_ENV]: unit ? 'unit' : 'full', PLANT_STORE_TEST_SKIPS: skipsFile };
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...runnerArgs, ...files], { stdio: 'inherit', env });
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
process.exit(result.status ?? 1);
