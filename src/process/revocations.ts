import { isOurs, type SupervisorMessage, type WorkerMessage } from './protocol.js';
import type { WorkerProcess } from './worker.js';

/**
 * A token revoked through one worker (DELETE /tokens/{id}) is refused by every worker of the instance from
 * the DELETE's answer on: each worker caches a stored token's look-up for up to 500 ms (auth/tokens.ts,
 * TOKEN_CACHE_MS), so the revoking worker has the supervisor tell the others to forget it, and answers
 * once they have. Revocation is rare: nothing is asked of any other request.
 */

/**
 * How long the supervisor waits for the other workers to forget a token: TOKEN_CACHE_MS (test/process/
 * revocations.test.ts holds them equal), past which every look-up they cached before the revocation has
 * expired anyway. A worker that never answers (of an earlier release, or stuck) cannot hold a DELETE longer.
 */
export const FORGET_WAIT_MS = 500;

/** The supervisor's side: every worker but `from` forgets the token; resolves when all have, or left, or the wait ended. */
export async function relayRevocation(members: Iterable<Pick<WorkerProcess, 'forgetToken'>>, from: object, tokenId: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, FORGET_WAIT_MS)));
  const others = [...members].filter((member) => member !== from);
  await Promise.race([Promise.all(others.map((other) => other.forgetToken(tokenId))), waited]);
  clearTimeout(timer);
}

/**
 * A worker's side (role.relaysRevocations): tells the supervisor of a token revoked here, resolving once
 * the others have forgotten it (at once when there is no supervisor to tell, or its channel has closed).
 */
export function revocationTeller(): (tokenId: string) => Promise<void> {
  let requests = 0;
  const waiting = new Map<number, () => void>();
  process.on('message', (message: unknown) => {
    if (isOurs<SupervisorMessage>(message) && message.plantStore === 'token-revoked') waiting.get(message.request)?.();
  });
  return (tokenId) =>
    new Promise<void>((resolve) => {
      const request = ++requests;
      const done = () => {
        waiting.delete(request);
        resolve();
      };
      waiting.set(request, done);
      const message: WorkerMessage = { plantStore: 'token-revoked', request, tokenId };
      if (!process.send || !process.connected) return done();
      process.send(message, undefined, undefined, (error: Error | null) => {
        if (error) done();
      });
    });
}
