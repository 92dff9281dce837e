import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { request, startServer } from '../process.js';
import { Receiver } from './receiver.js';

/**
 * Deliveries go out on a host whose cores other work keeps busy. Where the process has a second core they
 * are sent from a thread of their own at a low priority (webhooks/delivery-worker.ts); a priority weighs
 * against every busy process of the host, and at the lowest (nice 19) this test's delivery took 20 s
 * or more (none in 20 s in two runs of three), against 4 s at nice 10. The busy processes are shell
 * loops, each ended by `timeout` even should this test's process die, and by the test as soon as the
 * delivery is in.
 */

const TOKEN = 'busy-host-test-token-0123456789abcdef';
/** Busy processes a core: the host's other work, each wanting a whole core as much as the service does. */
const BUSY_A_CORE = 3;
/** Their longest life, whatever becomes of this test's process. */
const BUSY_MAX_SECONDS = 40;

function keepCoresBusy(count: number): ChildProcess[] {
  return Array.from({ length: count }, () => spawn('timeout', [String(BUSY_MAX_SECONDS), 'sh', '-c', 'while :; do :; done'], { stdio: 'ignore' }));
}

test('a delivery goes out while other processes keep every core of the host busy', async () => {
  const server = await startServer(after, {
    env: { DATABASE_URL: `file:${join(tempDir(after), 'busy.db')}`, PLANT_STORE_TOKENS: TOKEN, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
  });
  const receiver = await Receiver.start(after);
  const hook = await request(`${server.url}/webhooks`, {
    method: 'POST',
    token: TOKEN,
    body: JSON.stringify({ url: receiver.url, events: ['plant.created'] }),
  });
  assert.equal(hook.status, 201, hook.text);

  const busy = keepCoresBusy(BUSY_A_CORE * availableParallelism());
  // SIGTERM, which `timeout` passes on to its loop (a SIGKILL would end `timeout` alone and leave the loop).
  const stopBusy = () => {
    for (const child of busy) child.kill('SIGTERM');
  };
  after(stopBusy);
  try {
    const created = await request(`${server.url}/plants`, { method: 'POST', token: TOKEN, body: '{"id":1,"name":"Busy"}' });
    assert.equal(created.status, 200, created.text);
    const [delivery] = await receiver.waitFor(1, 30_000);
    assert.match(delivery!.body, /"type":"plant\.created"/);
    assert.match(delivery!.body, /"data":\{"id":1,"name":"Busy"\}/);
  } finally {
    stopBusy();
  }
});
