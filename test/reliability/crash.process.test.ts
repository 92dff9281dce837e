import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { killService } from '../process/supervised.js';
import { startServer } from '../process.js';
import { sqliteIntegrity, TOKEN, verifyAfterCrash, writer, WRITERS, type Known } from './crash-workload.js';
import { sleep, until } from '../toolkit.js';

/**
 * Crash durability of the real server process: clients write plants at full speed (creates and
 * replacements) while the service (the supervisor and its worker) is killed with SIGKILL at a random moment, several rounds in a row,
 * restarting in between. After each restart every write answered 200/201 is there with exactly the
 * acknowledged content (a write in flight at the kill may or may not be), nothing never sent is there,
 * PRAGMA integrity_check is ok, and the service started on its own. CRASH_ROUNDS sets the rounds (default 3).
 */
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 3);

test(`SIGKILL at a random moment, ${ROUNDS} rounds: every acknowledged write survives exactly`, { timeout: 10 * 60_000 }, async (t) => {
  const dir = tempDir(after);
  const file = join(dir, 'crash.db');
  const env = { DATABASE_URL: `file:${file}`, PLANT_STORE_TOKENS: TOKEN, LOG_LEVEL: 'info' };
  const known = new Map<string, Known>();
  let server = await startServer(after, { env });

  for (let round = 1; round <= ROUNDS; round++) {
    const stop = { now: false };
    const writers = Array.from({ length: WRITERS }, (_, w) => writer(server, round, w, known, stop));
    // A random moment once writes flow: after at least a few hundred acknowledgements.
    const ackedSoFar = () => [...known.values()].filter((k) => k.acked?.name.startsWith(`r${round} `)).length;
    const started = Date.now();
    await until(() => ackedSoFar() >= 1000, 'writes to be acknowledged', { timeoutMs: 120_000 });
    await sleep(Math.floor(Math.random() * 1000));
    killService(server);
    const exit = await server.exited;
    stop.now = true;
    const acked = (await Promise.all(writers)).reduce((a, b) => a + b, 0);
    const seconds = (Date.now() - started) / 1000;
    assert.equal(exit.signal, 'SIGKILL');
    const inFlight = [...known.values()].filter((k) => k.inFlight !== undefined).length;

    server = await startServer(after, { env });
    const storedCount = await verifyAfterCrash(server, known);
    assert.equal(sqliteIntegrity(file), 'ok');
    t.diagnostic(
      `round ${round}: ${acked} writes acknowledged in ${seconds.toFixed(1)} s (${WRITERS} clients), SIGKILL with ${inFlight} in flight; ` +
        `${storedCount} plants after restart, none lost or changed, integrity ok`,
    );
  }
  await server.stop('SIGTERM');
});
