import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { until } from '../toolkit.js';
import { children, servingChunk, type Supervised } from './supervised.js';

/**
 * Workers a test holds as they start, each known by its pid as the operating system and the supervisor
 * name it. A module appended to an install's worker code (what the supervisor never loads: it loads the
 * chunk, its threads and backup child do not) makes each worker started from then on wait, under its own
 * pid, until the test lets that pid in. Which worker is which is never read from the order in which they
 * reach the gate: it is told by the supervisor's children (/proc) as each event happens, and by the pids
 * its log names. Nothing is read from a file a worker writes: an earlier gate had each worker write its
 * pid, and a read between the file's creation and its write gave '' (pid 0, which `until` takes as an
 * answer), under load, in CI; a worker's arrival here is a folder, made at once.
 */

/** Each worker started from now on marks its arrival (a folder named by its pid) and waits for `go-<pid>`, or `all`. */
export function installGate(dir: string): Gate {
  const gates = join(dir, 'gates');
  mkdirSync(gates);
  writeFileSync(
    join(dir, 'gate.js'),
    `import { existsSync, mkdirSync } from 'node:fs';
const gates = ${JSON.stringify(gates)};
// (A pid used again after the counter wrapped round finds its folder there: no failure.)
mkdirSync(gates + '/' + process.pid, { recursive: true });
while (!existsSync(gates + '/go-' + process.pid) && !existsSync(gates + '/all')) await new Promise((resolve) => setTimeout(resolve, 20));
`,
  );
  appendFileSync(servingChunk(dir), "\nawait import('../../gate.js');\n");
  return {
    arrived: (pid) => existsSync(join(gates, String(pid))),
    open: (pid) => writeFileSync(join(gates, `go-${pid}`), ''),
    openAll: () => writeFileSync(join(gates, 'all'), ''),
  };
}

export interface Gate {
  /** Whether the worker of this pid has reached the gate (it waits there until opened). */
  arrived(pid: number): boolean;
  /** Lets the worker of this pid in, now or whenever it arrives. */
  open(pid: number): void;
  /** Lets every worker in, those to come too. */
  openAll(): void;
}

/**
 * The one worker the supervisor starts next: the child it has that is none of `known` (every worker it
 * has had so far), waited for, and then held at the gate. Two new children at once fail the test.
 */
export async function nextWorker(server: Supervised, gate: Gate, known: number[], what: string): Promise<number> {
  const fresh = await until(
    () => {
      const unknown = children(server.pid).filter((pid) => !known.includes(pid));
      return unknown.length > 0 && unknown;
    },
    `${what} to start (the supervisor's children besides ${known.join(', ')})`,
  );
  assert.equal(fresh.length, 1, `one worker started (${what}), and the supervisor's new children are ${fresh.join(', ')}`);
  const pid = fresh[0]!;
  await until(() => gate.arrived(pid), `${what} (${pid}) to reach the gate`);
  return pid;
}
