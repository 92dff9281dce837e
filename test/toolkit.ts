import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { relative } from 'node:path';
import { test } from 'node:test';
import type { Worker } from 'node:worker_threads';

/**
 * The tests' shared toolkit, one of each: waiting until something has happened (`until`), a pause where
 * time itself is what a test needs (`sleep`), the next page's link (`nextLink`), waiting for a revoked
 * token to be refused (`becomesRefused`), the threads the code under test starts (`watchThreads`), and
 * skipping for what this machine lacks (`needs`). It loads nothing of the app, so that any test may use it.
 */

/** A pause, for what is about time itself (spreading writes, a kill at a random moment), never to wait for something to happen. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * How long `until` polls before it gives up. Not a bound on the product: what is awaited is an event, and
 * the limit only turns "it never happens" into a failure that names it. Generous, because a shared machine
 * under load can stall a process for seconds.
 */
export const UNTIL_TIMEOUT_MS = 30_000;

/**
 * Polls `check` (every `everyMs`, 20 by default) until it answers something other than false, undefined or
 * null, and resolves with that answer; rejects naming `what` if it never does within `timeoutMs`.
 */
export async function until<T>(
  check: () => T | Promise<T>,
  what: string,
  { timeoutMs = UNTIL_TIMEOUT_MS, everyMs = 20 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<Exclude<T, false | undefined | null>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== false && value !== undefined && value !== null) return value as Exclude<T, false | undefined | null>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** The target of a `Link: <…>; rel="next"` header, or undefined without one; anything else in the header fails. */
export function nextLink(header: string | string[] | number | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^<([^>]+)>;\s*rel="next"$/.exec(String(header));
  assert.ok(match, `Link header "${String(header)}" is not <url>; rel="next"`);
  return match[1];
}

/**
 * The docs promise that every instance refuses a revoked token within a second (stored tokens are cached
 * for TOKEN_CACHE_MS, 500 ms). The bound here is ten times that: generous for a loaded machine that stalls
 * the server and this poll, and still well short of the 30 s a token would be honoured from a longer cache
 * (JWT_CACHE_MS), which it would catch.
 */
const REVOCATION_BOUND_MS = 10_000;

/** Waits until `url` refuses `token` with 401, as it must soon after the token was revoked or deleted. */
export async function becomesRefused(url: string, token: string): Promise<void> {
  await until(
    async () => {
      const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      // Not read: a token still honoured may be answered with an endless event stream.
      await response.body?.cancel();
      return response.status === 401;
    },
    `${url} to refuse the revoked token`,
    { timeoutMs: REVOCATION_BOUND_MS, everyMs: 50 },
  );
}

/** A thread started by the code under test, as watchThreads sees it. */
export interface WatchedThread extends Worker {
  /** Called after each message the code posts to the thread (a test may stop the thread there). */
  afterPost?: (message: unknown) => void;
}

/**
 * The threads started from now on, in order (until `cleanup` runs): node:worker_threads' Worker replaced by
 * one that is the same but for being listed, and seen by the modules that import it (syncBuiltinESMExports).
 */
export function watchThreads(cleanup: (restore: () => void) => void): WatchedThread[] {
  const threads = createRequire(import.meta.url)('node:worker_threads') as { Worker: typeof Worker };
  const Real = threads.Worker;
  const started: WatchedThread[] = [];
  threads.Worker = class extends Real implements WatchedThread {
    afterPost?: (message: unknown) => void;
    constructor(...args: ConstructorParameters<typeof Real>) {
      super(...args);
      started.push(this);
    }
    override postMessage(...args: Parameters<Worker['postMessage']>): void {
      super.postMessage(...args);
      this.afterPost?.(args[0]);
    }
  };
  syncBuiltinESMExports();
  cleanup(() => {
    threads.Worker = Real;
    syncBuiltinESMExports();
  });
  return started;
}

/** Set to `fail` (CI does, in .ci/run): a test that cannot run for a missing dependency or privilege fails the run. */
const MISSING_ENV = 'PLANT_STORE_TEST_MISSING';
/** A file scripts/run-tests.mjs names: each such skip is added to it, one JSON line each, for the run's summary. */
const SKIPS_ENV = 'PLANT_STORE_TEST_SKIPS';

/**
 * The `skip` option for tests that need something this machine may lack (a tool, a database server, a
 * browser, root): false when `missing` is falsy, else the reason. Where the lack is allowed (a developer's
 * machine) the tests are skipped, said at once on stderr and again in the run's summary; where
 * PLANT_STORE_TEST_MISSING=fail (CI) a failing test is declared in their place, so the run fails and says
 * what is missing. Call it where the tests are declared (the file's top, or a suite's body).
 */
export function needs(what: string, missing: string | false | undefined | null): string | false {
  if (!missing) return false;
  // The test's source, as the compiled file being run names it (dist/test/x.test.js: test/x.test.ts).
  const file = relative(process.cwd(), process.argv[1] ?? '?')
    .replace(/^dist\//, '')
    .replace(/\.js$/, '.ts');
  const failing = process.env[MISSING_ENV] === 'fail';
  const skips = process.env[SKIPS_ENV];
  if (skips) appendFileSync(skips, `${JSON.stringify({ file, what, missing, failing })}\n`);
  if (failing) {
    test(`${what} can run here`, () => assert.fail(`${missing} (${MISSING_ENV}=fail: every test must run here)`));
  } else {
    process.stderr.write(`\n*** SKIPPING ${what}: ${missing} ***\n\n`);
  }
  return `${what}: ${missing}`;
}
