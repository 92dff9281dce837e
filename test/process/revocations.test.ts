import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TOKEN_CACHE_MS } from '../../src/auth/tokens.js';
import { FORGET_WAIT_MS, relayRevocation } from '../../src/process/revocations.js';

/** The supervisor's relay of a revocation to the other workers (process/revocations.ts); the whole service: revocations.process.test.ts. */

test('the supervisor waits for the other workers no longer than their cached look-ups live', () => {
  assert.equal(FORGET_WAIT_MS, TOKEN_CACHE_MS);
});

test('every worker but the revoking one is told, and the relay ends once they have all forgotten the token', async () => {
  const told: string[] = [];
  const answers: Array<() => void> = [];
  const member = (name: string) => ({
    forgetToken: (tokenId: string) =>
      new Promise<void>((resolve) => {
        told.push(`${name}:${tokenId}`);
        answers.push(resolve);
      }),
  });
  const [a, b, c] = [member('a'), member('b'), member('c')];
  let relayed = false;
  const relay = relayRevocation([a, b, c], b, 'abc123').then(() => (relayed = true));
  assert.deepEqual(told, ['a:abc123', 'c:abc123']);
  answers[0]!();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(relayed, false, 'one has not answered yet');
  answers[1]!();
  await relay;
  assert.equal(relayed, true);
});

test('a worker that never answers (of an earlier release) holds the relay no longer than the wait', async () => {
  await relayRevocation([{ forgetToken: () => new Promise<void>(() => undefined) }], {}, 'abc123');
});
