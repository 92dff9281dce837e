import assert from 'node:assert/strict';
import cluster from 'node:cluster';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, test } from 'node:test';
import { summed } from '../../src/metrics/cluster.js';
import { WorkerProcess } from '../../src/process/worker.js';
import { tempDir } from '../helpers.js';

/**
 * The supervisor's sum of its workers' metrics, their answers crossing the cluster's IPC channel as it carries
 * them (JSON, where NaN is null): a gauge that knows nothing reads NaN in a worker (the webhook backlog when
 * the database does not answer), and the sum must read NaN too, not 0 ("nothing pending") as it did. The
 * rule is prom-client's own arithmetic: the largest of the workers' backlogs is NaN when any of them is, each
 * worker having asked the database at the same scrape.
 */
test("the workers' backlog reads NaN through the supervisor's sum when a worker's database does not answer", async () => {
  const dir = tempDir(after);
  const script = join(dir, 'metrics-worker.mjs');
  const module = (path: string) => JSON.stringify(pathToFileURL(join(import.meta.dirname, '../../src', path)).href);
  // A worker with the service's registry and its answer to the supervisor: slot 0's database does not answer, the others' count 3.
  writeFileSync(
    script,
    `import { Metrics } from ${module('metrics/registry.js')};
import { isOurs, metricsAnswer, roleOf } from ${module('process/protocol.js')};
const metrics = new Metrics();
const down = roleOf(process.env).slot === 0;
metrics.watchBacklog(() => (down ? Promise.reject(new Error('the database does not answer')) : Promise.resolve(3)));
process.on('message', (message) => {
  if (isOurs(message) && message.plantStore === 'metrics') {
    void metrics.registry.getMetricsAsJSON().then((json) => process.send(metricsAnswer(message.request, json)));
  }
});
process.send({ plantStore: 'ready', version: 'test' });
`,
  );
  cluster.setupPrimary({ exec: script, silent: true });
  const members = [0, 1, 2].map((slot) => new WorkerProcess({ slot, announce: false, backups: false }, () => undefined));
  after(() => {
    for (const member of members) member.kill('SIGKILL');
  });
  // Asked once each listens (a message before that is lost).
  for (const member of members) assert.equal(await member.ready, true, 'a worker started');
  let request = 0;
  const backlog = async (...asked: WorkerProcess[]) => {
    const { body } = await summed(
      async () => new Map(await Promise.all(asked.map(async (member) => [member, await member.metrics(++request)] as const))),
    )();
    return /^plant_store_webhook_backlog (\S+)$/m.exec(body)?.[1];
  };

  assert.equal(await backlog(members[0]!), 'Nan', 'one worker, its database silent');
  assert.equal(await backlog(members[0]!, members[1]!), 'Nan', 'one of two workers without an answer');
  assert.equal(await backlog(members[1]!, members[2]!), '3', 'every worker answered');
});
