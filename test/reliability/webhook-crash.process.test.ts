import { join } from 'node:path';
import { after, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { startServer } from '../process.js';
import { Receiver } from '../webhooks/receiver.js';
import { announcements, assertAllAnnounced, registerEndpoint, TOKEN, webhookWriter, type Writes } from './webhook-workload.js';
import { sleep, until } from '../toolkit.js';

/**
 * Webhooks survive a crash (SQLite): clients write at full speed while the service, subscribed to by a
 * receiver, is killed with SIGKILL at a random moment, twice. After the restarts every acknowledged
 * change reaches the receiver (verified with standardwebhooks), and none that was never made.
 */
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 2);
const WRITERS = 12;

test(
  `webhooks on SQLite: SIGKILL under load, ${ROUNDS} rounds; every acknowledged change is announced after the restart`,
  { timeout: 5 * 60_000 },
  async (t) => {
    const receiver = await Receiver.start(after);
    const env = {
      DATABASE_URL: `file:${join(tempDir(after), 'hooks.db')}`,
      PLANT_STORE_TOKENS: TOKEN,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2',
    };
    let server = await startServer(after, { env });
    const secret = await registerEndpoint(server, receiver.url);
    const writes: Writes = { acked: new Set(), maybe: new Set() };
    const announced = announcements(receiver, secret);
    const started = Date.now();
    for (let round = 1; round <= ROUNDS; round++) {
      const stop = { now: false };
      const before = writes.acked.size;
      const writers = Array.from({ length: WRITERS }, (_, w) =>
        webhookWriter(() => server.url, `${round}${String(w).padStart(2, '0')}`, writes, stop),
      );
      await until(() => writes.acked.size - before >= 500, 'writes to be acknowledged', { timeoutMs: 120_000 });
      await sleep(Math.floor(Math.random() * 500));
      server.signal('SIGKILL');
      await server.exited;
      stop.now = true;
      await Promise.all(writers);
      t.diagnostic(
        `round ${round}: ${writes.acked.size - before} writes acknowledged, ${receiver.received.length} deliveries so far; SIGKILL at ${(Date.now() - started) / 1000} s`,
      );
      server = await startServer(after, { env });
    }
    // Messages the killed processes had claimed wait for their lease (2 × 1 s + 1 s), then go out.
    await until(() => [...writes.acked].every((w) => announced().has(w)), 'every acknowledged write to be announced', {
      timeoutMs: 60_000,
      everyMs: 200,
    });
    assertAllAnnounced(writes, announced());
    t.diagnostic(
      `${writes.acked.size} acknowledged writes, all announced by ${(Date.now() - started) / 1000} s; ${receiver.received.length} deliveries (at least once)`,
    );
    await server.stop('SIGTERM');
  },
);
