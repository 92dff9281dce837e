import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from '../helpers.js';
import { run } from '../process.js';
import { freePort } from './supervised.js';

/**
 * A worker killed while cluster's round robin hands it a connection: Node then emits its 'exit' but, most
 * times, no 'disconnect' (a bare cluster server shows it in 7 kills of 8), and the supervisor, which waited
 * for both, never saw the crash: no worker started in its place, the service down, its main process alive.
 * WorkerProcess.exited must resolve all the same. Real processes, in a primary of their own (a connection
 * lost on its way to a dead worker stays open in the primary for good, and would keep this test's process
 * alive): a worker that is a bare HTTP server, killed six times under a connection a millisecond.
 */

const WORKER_MODULE = new URL('../../src/process/worker.js', import.meta.url).href;

function primary(workerScript: string, port: number): string {
  return `
import cluster from 'node:cluster';
import { request } from 'node:http';
import { WorkerProcess } from ${JSON.stringify(WORKER_MODULE)};
cluster.schedulingPolicy = cluster.SCHED_RR;
cluster.setupPrimary({ exec: ${JSON.stringify(workerScript)} });
setInterval(() => request({ port: ${port}, host: '127.0.0.1', agent: false }, (r) => r.resume()).on('error', () => {}).end(), 1);
const seen = [];
for (let round = 1; round <= 6; round++) {
  const worker = new WorkerProcess({ slot: 0, announce: false, backups: false }, () => undefined);
  await new Promise((resolve) => cluster.once('listening', resolve));
  await new Promise((resolve) => setTimeout(resolve, 300));
  worker.kill('SIGKILL');
  seen.push(await Promise.race([worker.exited, new Promise((resolve) => setTimeout(() => resolve('not seen'), 10000))]));
}
process.stdout.write(JSON.stringify(seen));
process.exit(0);
`;
}

describe('a worker killed while connections are handed to it', () => {
  it('is seen to exit, every time', async () => {
    const dir = tempDir(after);
    const port = await freePort();
    writeFileSync(join(dir, 'worker.mjs'), `import http from 'node:http';\nhttp.createServer((q, r) => r.end('ok')).listen(${port}, '127.0.0.1');\n`);
    writeFileSync(join(dir, 'primary.mjs'), primary(join(dir, 'worker.mjs'), port));
    const result = await run([join(dir, 'primary.mjs')], { timeoutMs: 120_000 });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      JSON.parse(result.stdout),
      Array.from({ length: 6 }, () => ({ code: null, signal: 'SIGKILL' })),
    );
  });
});
