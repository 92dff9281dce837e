import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { run } from '../process.js';

const CHILD = fileURLToPath(new URL('./jwks-gc-child.js', import.meta.url));

test('a JWKS fetch gives up after 5 s even while the garbage collector runs, and says so', async () => {
  const result = await run(['--expose-gc', CHILD], { timeoutMs: 60_000 });
  assert.equal(result.code, 0, result.stderr);
  const { ms, outcome, failures } = JSON.parse(result.stdout) as { ms: number; outcome: string; failures: string[] };
  // The bound is 5 s; the provider would answer after 20 s. The margin is for a busy machine, not for the provider.
  assert.ok(ms >= 4900 && ms < 12_000, `the verification waited ${ms.toFixed(0)} ms`);
  assert.match(outcome, /^KeysUnavailableError: .*JWT_JWKS_URL/);
  assert.deepEqual(failures, ['no answer within 5 s']);
});
