import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { sleep, until } from '../toolkit.js';
import { installGate, nextWorker, type Gate } from './gated-workers.js';
import { alive, children, install, serve, type Supervised } from './supervised.js';

/**
 * A worker that crashes while a reload is under way (WEB_CONCURRENCY=2): its slot is filled by one worker,
 * whether the reload's replacement or the supervisor's restart gets there first, never by both. A second
 * worker started for the slot served beside the others for good (three workers for two), outside every
 * later reload: after the next upgrade a third of the connections still met the release before.
 *
 * The workers started after the service's start wait at a gate (test/process/gated-workers.ts), each under
 * its pid, until the test lets it in, so that the test decides which of them is ready first. Which worker
 * is which is told by the operating system (the supervisor's new child after each event) and by the pids
 * the supervisor's log names, never by the order in which the workers reach the gate.
 */

const TOKEN = 'reload-crash-test-token-0123456789ab';
/** The supervisor restarts a crashed worker this long after the crash (process/workers.ts). */
const RESPAWN_DELAY_MS = 1000;

/** The supervisor's workers by slot, as it logged them once they all served. */
function slots(server: Supervised): number[] {
  const match = /"workers":\[(\d+),(\d+)\]/.exec(server.stdout());
  assert.ok(match, `the supervisor names its workers: ${server.stdout()}`);
  return [Number(match[1]), Number(match[2])];
}

async function startTwo(): Promise<{ server: Supervised; dir: string }> {
  const dir = install(join(tempDir(after), 'install'));
  // The workers held at the gate are not ready for as long as the test holds them: the reload waits (the most it may).
  const server = await serve(
    after,
    { DATABASE_URL: `file:${join(dir, 'plants.db')}`, PLANT_STORE_TOKENS: TOKEN, WEB_CONCURRENCY: '2', RELOAD_TIMEOUT_MS: '3600000' },
    { dir, count: 2 },
  );
  // Supervising both (a SIGHUP before is refused: the service is starting).
  await until(() => server.stdout().includes('"msg":"supervising 2 workers"'), 'the supervisor to supervise both workers');
  return { server, dir };
}

/** The reloads ended, as the supervisor's log says (after its other lines about them: the handovers). */
const reloads = (server: Supervised) => server.stdout().match(/"msg":"reloaded: version /g)?.length ?? 0;

/**
 * Once the reloads have ended and the workers they replaced have exited: exactly two workers run, those
 * that said last that they serve; answers them.
 */
async function exactlyTwo(server: Supervised, reloaded: number, gone: number[]): Promise<number[]> {
  await until(() => reloads(server) >= reloaded, `reload ${reloaded} to end; stderr: ${server.stderr()}`, { timeoutMs: 60_000 });
  const handedOver = [...server.stdout().matchAll(/serves in place of (\d+), which hands over/g)].map((match) => Number(match[1]));
  for (const pid of [...gone, ...handedOver]) await until(() => !alive(pid), `worker ${pid} to exit`);
  const running = children(server.pid);
  assert.equal(running.length, 2, `WEB_CONCURRENCY=2, and the supervisor's children are ${running.join(', ')}; stderr: ${server.stderr()}`);
  // Each said it serves (its log line may come a moment after the supervisor's).
  for (const pid of running) await until(() => server.workers().some((worker) => worker.pid === pid), `worker ${pid} to say it serves`);
  return running;
}

/** A second reload replaces every worker that runs: none is left outside it. */
async function reloadReplacesAll(server: Supervised, gate: Gate, before: number[]): Promise<void> {
  gate.openAll();
  server.signal('SIGHUP');
  const replaced = await exactlyTwo(server, 2, before);
  assert.deepEqual(
    replaced.filter((pid) => before.includes(pid)),
    [],
    'every worker replaced',
  );
  for (const pid of before) assert.equal(alive(pid), false, `${pid} exited`);
  assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
  server.signal('SIGTERM');
  assert.deepEqual(await server.exited, { code: 0, signal: null });
}

/** The supervisor's log says that `pid` serves in place of `old`, which hands over (slot by slot, as the reload goes). */
const handsOver = (server: Supervised, pid: number, old: number) =>
  server.stdout().includes(`worker ${pid} serves in place of ${old}, which hands over`);

/** The supervisor's stderr says it saw `pid` crash (its restart, if any, follows RESPAWN_DELAY_MS later). */
const crashSeen = (server: Supervised, pid: number) =>
  until(() => server.stderr().includes(`worker ${pid} exited (killed by SIGKILL); starting another`), `the crash of ${pid} seen`);

const sorted = (pids: number[]) => [...pids].sort((a, b) => a - b);

describe('a worker that crashes during a reload (WEB_CONCURRENCY=2)', () => {
  test("crashed while the reload replaces its slot: the reload's worker fills it, no second one is started", async () => {
    const { server, dir } = await startTwo();
    const [first, second] = slots(server) as [number, number];
    const gate = installGate(dir);
    server.signal('SIGHUP');
    const slot0 = await nextWorker(server, gate, [first, second], "the reload's worker for slot 0");
    gate.open(slot0);
    await until(() => handsOver(server, slot0, first), `${slot0} to serve in place of ${first}`);
    // The reload has moved on to slot 1: its worker there starts (held), and slot 1's old worker crashes.
    const slot1 = await nextWorker(server, gate, [first, second, slot0], "the reload's worker for slot 1");
    process.kill(second, 'SIGKILL');
    await crashSeen(server, second);
    // A restart would start RESPAWN_DELAY_MS after the crash: past that, none has (the old slot 0 may still hand over).
    await sleep(RESPAWN_DELAY_MS + 1000);
    assert.deepEqual(
      children(server.pid).filter((pid) => pid !== first),
      sorted([slot0, slot1]),
      "no worker started for the crashed one beside the reload's",
    );
    gate.open(slot1);
    const running = await exactlyTwo(server, 1, [first, second]);
    assert.deepEqual(running, sorted([slot0, slot1]), "the reload's workers serve, one in each slot");
    assert.doesNotMatch(server.stdout(), /started in place of one that exited/, 'the reload met no restart');
    await reloadReplacesAll(server, gate, running);
  });

  test('restarted and still starting when the reload reaches its slot: the reload waits for it, then replaces it', async () => {
    const { server, dir } = await startTwo();
    const [first, second] = slots(server) as [number, number];
    const gate = installGate(dir);
    server.signal('SIGHUP');
    const slot0 = await nextWorker(server, gate, [first, second], "the reload's worker for slot 0");
    // Slot 1's worker crashes while slot 0's new one is held: the supervisor restarts it, and the restart is held too.
    process.kill(second, 'SIGKILL');
    await crashSeen(server, second);
    const restarted = await nextWorker(server, gate, [first, second, slot0], 'the restart of the crashed worker');
    gate.open(slot0);
    await until(() => handsOver(server, slot0, first), `${slot0} to serve in place of ${first}`);
    // The reload reaches slot 1, whose restart is still starting: it says it waits for it, and starts no other.
    await until(
      () =>
        server.stdout().includes(`"msg":"reload: worker ${restarted}, started in place of one that exited, is starting; the reload waits for it"`),
      `the reload to wait for ${restarted}; log: ${server.stdout()}`,
    );
    assert.deepEqual(
      children(server.pid).filter((pid) => pid !== first),
      sorted([slot0, restarted]),
      'no worker started beside the restart',
    );
    gate.open(restarted);
    // Once it serves, the reload replaces it (its log says the restart served: it hands over).
    const slot1 = await nextWorker(server, gate, [first, second, slot0, restarted], "the reload's worker for slot 1");
    gate.open(slot1);
    await until(() => handsOver(server, slot1, restarted), `${slot1} to serve in place of ${restarted}`);
    const running = await exactlyTwo(server, 1, [first, second, restarted]);
    assert.deepEqual(running, sorted([slot0, slot1]), "the reload's workers serve, one in each slot");
    await reloadReplacesAll(server, gate, running);
  });
});
