/**
 * The suite's two tiers. `npm test` runs every test. `npm run test:unit`, the fast tier, runs the
 * in-process tests (no *.process.test.ts) and skips the slow ones marked with these options; its runner
 * (scripts/run-tests.mjs) says so by PLANT_STORE_TEST_TIER=unit. A test file run by hand
 * (node --test dist/test/...) runs everything. Kept apart from helpers.ts, which loads the whole app:
 * the pure tests marked here (the JSON parser, case folding) do not need it.
 *
 *   it('exports 100,000 plants...', LARGE_DATA, async () => { ... });
 *   test('fuzz: ...', { ...FUZZING, timeout: 30 * 60_000 }, async () => { ... });
 *
 * In the fast tier the test shows as skipped, with the reason.
 */
const TEST_TIER_ENV = 'PLANT_STORE_TEST_TIER';

const fastTier = process.env[TEST_TIER_ENV] === 'unit';

/** Random cases by the hundred or thousand (fast-check properties, the request fuzzers). */
export const FUZZING = { skip: fastTier && 'fuzzing: npm test runs it' };

/** Tens of megabytes, or tens of thousands of plants or events. */
export const LARGE_DATA = { skip: fastTier && 'large data: npm test runs it' };
