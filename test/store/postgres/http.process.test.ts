import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, describe, it, test } from 'node:test';
import { postgresUnavailableReason, TEST_PG_ENV, TestPostgres } from './pg-server.js';
import { needs } from '../../toolkit.js';

/**
 * The HTTP behaviour on PostgreSQL: the same in-process suites that run on SQLite (test/plants/*,
 * test/events/*, test/tokens/*, test/http/auth, test/tracing's spans and deliveries) run again, unchanged, with testApp opening a fresh PostgreSQL database for each
 * app. One set of tests, parameterised by store, not two copies.
 */

const DIST_TEST = fileURLToPath(new URL('../..', import.meta.url));
/** The tests' sources (test/, beside dist/): what exists is read there, since a compiled test outlives its renamed source. */
const SOURCES = fileURLToPath(new URL('../../../../test/', import.meta.url));
const compiled = (source: string) => source.replace(/\.ts$/, '.js');
/** The in-process suites of a folder (*.process tests start real servers on stores of their own, PostgreSQL included). */
const suitesIn = (folder: string) =>
  readdirSync(SOURCES + folder)
    .filter((f) => f.endsWith('.test.ts') && !f.endsWith('.process.test.ts'))
    .map((f) => compiled(`${folder}/${f}`));
/** Suites named one by one: a file renamed or moved must be renamed here too, or the test below fails saying so. */
const NAMED = [
  'http/auth.test.ts',
  // Refusals counted against the rate limit: by the store's shared counts there (SharedRateLimiter).
  'http/rate-limit-refusals.test.ts',
  // A JWT's principal: its Idempotency-Key answers kept apart from another's of the same name.
  'auth/jwt-principals.test.ts',
  // A JWT whose subject is longer than a B-tree entry: its rate limit and Idempotency-Key answers kept all the same.
  'auth/jwt-long-claims.test.ts',
  // Idempotency-Keys: their outcomes kept in PostgreSQL's transactions (the webhook POSTs' too), the answers' bytes.
  'http/idempotency.test.ts',
  'http/idempotency-answers.test.ts',
  'http/idempotency-upgrade.test.ts',
  'webhooks/keyed.test.ts',
  // An endpoint's int64 setting: kept in PostgreSQL's column, the bodies its deliveries send; its migration beside the release before.
  'webhooks/int64.test.ts',
  'webhooks/int64-upgrade.test.ts',
  // Every list's paging (cursors, after) and every read's caching (ETags of pages read from PostgreSQL).
  'http/paging.test.ts',
  'http/caching.test.ts',
  // If-Match on endpoint and token writes: the strong ETags of what PostgreSQL reads back.
  'http/if-match-writes.test.ts',
  // Every answer of every operation against the OpenAPI document, as PostgreSQL's store makes it.
  'openapi/conformance.test.ts',
  // Spans of PostgreSQL's own batches (group commit, reads by id) and the trace context its outbox keeps.
  'tracing/spans.test.ts',
  'tracing/deliveries.test.ts',
];
const MISSING = NAMED.filter((file) => !existsSync(SOURCES + file));
const SUITES = [
  ...suitesIn('plants'),
  ...suitesIn('events'),
  // Tokens over the API: made, listed and revoked in PostgreSQL's tokens table (a revoked token refused, its streams ended).
  ...suitesIn('tokens'),
  ...NAMED.filter((file) => !MISSING.includes(file)).map(compiled),
];

/** Runs test files in a `node --test` of their own; resolves with its exit code and output. */
function runSuites(files: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  // Without NODE_TEST_CONTEXT the child is a runner of its own, not a reporting subprocess of ours.
  const { NODE_TEST_CONTEXT: _context, ...childEnv } = { ...process.env, ...env };
  const child = spawn(process.execPath, ['--test', '--test-concurrency=1', '--test-reporter=spec', ...files.map((f) => DIST_TEST + f)], {
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

const skipReason = needs('the HTTP suites on PostgreSQL', postgresUnavailableReason());

if (skipReason) {
  test('HTTP suites on PostgreSQL', { skip: skipReason }, () => {});
} else {
  const server = await TestPostgres.start(after);

  describe('the HTTP suites, on PostgreSQL', () => {
    it('has suites to run, and every suite it names exists', () => {
      assert.ok(SUITES.length >= 2, `found only ${SUITES.join(', ')}`);
      assert.deepEqual(MISSING, [], 'named in test/store/postgres/http.process.test.ts but not in test/: rename or remove them there');
    });

    for (const file of SUITES) {
      it(`passes ${file}`, { timeout: 600_000 }, async () => {
        const { code, output } = await runSuites([file], { [TEST_PG_ENV]: server.url('postgres') });
        // The pass count proves the suite really ran (a file that loads nothing would also exit 0).
        const passed = Number(/^ℹ pass (\d+)$/m.exec(output)?.[1] ?? 0);
        assert.ok(code === 0 && passed > 0, `${file} on PostgreSQL: exit code ${code}, ${passed} passed\n${output}`);
      });
    }
  });
}
