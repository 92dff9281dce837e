// `npm test`: node's test runner over every test file under dist/test (compiled by the pretest step).
// `npm run test:unit`: the in-process tests only (`--unit`): every *.test.js but the *.process.test.js,
// which start a server, the CLI, a PostgreSQL cluster or a browser as processes of their own.
// The files are listed here because the runner's arguments changed meaning: Node 20 searches a directory
// given to it, while Node 22 and later read each argument as a glob pattern and look a directory up as a
// file (so `node --test dist/test/` fails there). Files named *.test.js only: helpers are not tests.
// Other arguments go to the runner (`npm test -- --test-reporter=dot`).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = 'dist/test';
const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
const runnerArgs = args.filter((arg) => arg !== '--unit');
/** @type {string[]} */
const names = readdirSync(ROOT, { recursive: true, encoding: 'utf8' });
const files = names
  .filter((name) => name.endsWith('.test.js') && !(unitOnly && name.endsWith('.process.test.js')))
  .sort()
  .map((name) => join(ROOT, name));
if (files.length === 0) {
  process.stderr.write(`run-tests: no *.test.js file under ${ROOT}: run npm test (its pretest compiles them)\n`);
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...runnerArgs, ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
