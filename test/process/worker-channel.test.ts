import assert from 'node:assert/strict';
import cluster from 'node:cluster';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { WorkerProcess } from '../../src/process/worker.js';
import { tempDir } from '../helpers.js';
import { until } from '../toolkit.js';

/**
 * A worker that has closed its channel but not yet exited, as one does while it leaves after a reload: the
 * supervisor's messages to it are dropped, and a metrics request is answered with nothing, never an 'error'
 * event on the worker (with no listener, that ended the supervisor, and so the service: a scrape during a
 * reload did, in CI).
 */
test('a worker whose channel has closed: a metrics request answers nothing, and nothing is thrown', async () => {
  const dir = tempDir(after);
  const script = join(dir, 'leaving-worker.mjs');
  // Closes its channel at once, then stays a little while, as a worker that finishes its requests does. Through
  // cluster's own disconnect: a bare process.disconnect() makes a cluster worker exit at once, and the test
  // then raced that exit.
  writeFileSync(script, "import cluster from 'node:cluster';\ncluster.worker.disconnect();\nsetTimeout(() => undefined, 10_000);\n");
  cluster.setupPrimary({ exec: script, silent: true });
  const member = new WorkerProcess({ slot: 0, announce: false, backups: false }, () => undefined);
  after(() => member.kill('SIGKILL'));
  const errors: unknown[] = [];
  const onUncaught = (error: unknown) => errors.push(error);
  process.on('uncaughtException', onUncaught);
  after(() => process.off('uncaughtException', onUncaught));

  const worker = Object.values(cluster.workers ?? {}).find((each) => each?.process.pid === member.pid);
  assert.ok(worker, 'the forked worker');
  await until(() => !worker.isConnected(), 'the worker to close its channel', { timeoutMs: 10_000 });
  assert.ok(member.pid !== undefined && worker.process.exitCode === null, 'still running, its channel closed');

  assert.deepEqual(await member.metrics(1), []);
  // Other messages are dropped likewise.
  member.send({ plantStore: 'metrics', request: 2 });
  let unsent = false;
  member.send({ plantStore: 'metrics', request: 3 }, () => (unsent = true));
  assert.equal(unsent, true);
  // An 'error' event would come on a later turn: give it one.
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(errors, []);
});
