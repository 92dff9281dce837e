import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hashToken, TokenVerifier } from '../../src/auth/tokens.js';
import type { TokenRecord, TokenStore } from '../../src/store/token-store.js';

/**
 * A stored token's look-up is cached for TOKEN_CACHE_MS; forget() (its revocation, here or by another
 * worker: process/revocations.ts) drops it. A look-up still in flight when the token is forgotten may have
 * read it before the revocation: it answers its own request, but is not cached, or the token would be
 * accepted again after its revocation's answer.
 */
test('a look-up in flight across a forget answers its request but is not cached', async () => {
  const secret = 'ps_secret-of-a-stored-token';
  const record: TokenRecord & { hash: Buffer } = {
    id: 'abc123abc123',
    name: 'reader',
    scopes: ['plants:read'],
    createdAt: '2026-01-01T00:00:00.000Z',
    revokedAt: null,
    hash: hashToken(secret),
  };
  let lookUps = 0;
  let release: (found: typeof record | undefined) => void = () => undefined;
  const store = {
    findActiveByHash: () => {
      lookUps++;
      return new Promise<typeof record | undefined>((resolve) => (release = resolve));
    },
  } as unknown as TokenStore;
  const verifier = new TokenVerifier([], store);

  const inFlight = verifier.verify(secret);
  verifier.forget(record.id);
  release(record);
  assert.equal(((await inFlight) as { tokenId: string }).tokenId, record.id, 'its own request is answered');
  // The next request asks the store again (which now finds it revoked) instead of a cached verdict.
  const next = verifier.verify(secret);
  assert.ok(next instanceof Promise, 'not answered from the cache');
  assert.equal(lookUps, 2);
  release(undefined);
  assert.equal(await next, 'unknown or revoked bearer token');

  // Without a forget meanwhile, a look-up is cached as before.
  const cached = verifier.verify(secret);
  release(record);
  await cached;
  assert.equal((verifier.verify(secret) as { tokenId: string }).tokenId, record.id);
  assert.equal(lookUps, 3);
});
