import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { DueMessage } from '../../src/store/webhook-store.js';
import { DeliveryThread } from '../../src/webhooks/delivery-thread.js';
import { sign } from '../../src/webhooks/signing.js';
import { until, watchThreads } from '../toolkit.js';

/**
 * Deliveries sent from a thread of their own (webhooks/delivery-thread.ts): the same attempts as the
 * Sender's, signed, guarded and bounded there, their outcomes back on the main thread; a thread that
 * stops, or stops with attempts in hand, fails them rather than leaving them unanswered.
 */

const SECRET = 'whsec_' + Buffer.alloc(32, 7).toString('base64');

function message(url: string, eventId = 'msg_1', payload = '{"n":1}'): DueMessage {
  return { seq: eventId, endpointId: 'ep_1', url, secrets: [SECRET], eventId, payload, roundAttempts: 0 };
}

describe('the delivery thread', () => {
  let server: Server;
  let url: string;
  const received: Array<{ id: string; body: string; signature: string; timestamp: string; traceparent?: string }> = [];
  /** Requests to /hang that the receiver has whole (and never answers). */
  let hanging = 0;

  before(async () => {
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      let body = '';
      request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        if (request.url === '/hang') {
          hanging++;
          return;
        }
        received.push({
          id: String(request.headers['webhook-id']),
          body,
          signature: String(request.headers['webhook-signature']),
          timestamp: String(request.headers['webhook-timestamp']),
          ...(request.headers.traceparent === undefined ? {} : { traceparent: String(request.headers.traceparent) }),
        });
        if (request.url === '/gone') response.writeHead(410).end();
        else response.writeHead(204).end();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it('sends each message signed, with its trace headers, and answers each outcome: many sent in one turn', async () => {
    const thread = new DeliveryThread({ timeoutMs: 5000, allowPrivateNetworks: true });
    try {
      const sent = Array.from({ length: 40 }, (_, i) =>
        thread.send(message(`${url}/ok`, `msg_${i}`, `{"n":${i}}`), i === 0 ? { traceparent: '00-abc-def-01' } : undefined),
      );
      const outcomes = await Promise.all(sent);
      assert.deepEqual(new Set(outcomes.map((o) => JSON.stringify(o))), new Set([JSON.stringify({ status: 204, error: null })]));
      assert.equal(await thread.send(message(`${url}/gone`)).then((o) => o.status), 410);
      const first = received.find((r) => r.id === 'msg_0')!;
      assert.equal(first.traceparent, '00-abc-def-01');
      for (const r of received.filter((r) => r.id.startsWith('msg_') && r.body.startsWith('{"n":'))) {
        assert.equal(r.signature, sign(SECRET, r.id, Number(r.timestamp), r.body), `${r.id}: signed with the endpoint's secret`);
      }
    } finally {
      await thread.close();
    }
  });

  it('guards the network there as the Sender does: a private address refused, unless allowed', async () => {
    const thread = new DeliveryThread({ timeoutMs: 5000, allowPrivateNetworks: false });
    try {
      const outcome = await thread.send(message(`${url}/ok`));
      assert.equal(outcome.status, null);
      assert.match(outcome.error ?? '', /not a public address|private|loopback/i);
      assert.equal(outcome.refused?.address, '127.0.0.1');
    } finally {
      await thread.close();
    }
  });

  it('stopping with attempts in hand: they fail, within a second, and nothing is sent after', async () => {
    const thread = new DeliveryThread({ timeoutMs: 60_000, allowPrivateNetworks: true });
    const before = hanging;
    const pending = thread.send(message(`${url}/hang`));
    await until(() => hanging > before, 'the receiver to have the attempt (it never answers)');
    const started = Date.now();
    await thread.close();
    const outcome = await pending;
    assert.equal(outcome.status, null);
    assert.match(outcome.error ?? '', /delivery thread stopped/);
    // The bound is the point: the attempt's own time-out is 60 s, the close's grace 1 s; half a minute tells
    // the two apart however loaded the machine, where "within a second" would fail on a stalled one.
    assert.ok(Date.now() - started < 30_000, 'the close did not wait for the attempt');
    assert.deepEqual(await thread.send(message(`${url}/ok`)), { status: null, error: 'the service is stopping' });
  });

  it('warmed up: the thread starts before any delivery, once, and the deliveries use it', async (t) => {
    const threads = watchThreads((restore) => t.after(restore));
    const thread = new DeliveryThread({ timeoutMs: 5000, allowPrivateNetworks: true });
    try {
      await thread.warmUp();
      assert.equal(threads.length, 1, 'started by warmUp');
      await thread.warmUp();
      assert.equal((await thread.send(message(`${url}/ok`, 'msg_warm'))).status, 204);
      assert.equal(threads.length, 1, 'the same thread warmed up twice and sending');
    } finally {
      await thread.close();
    }
    await thread.warmUp();
    assert.equal(threads.length, 1, 'a closed sender starts nothing');
  });

  it('a thread that never sent closes at once, having started nothing', async (t) => {
    const threads = watchThreads((restore) => t.after(restore));
    const thread = new DeliveryThread({ timeoutMs: 1000, allowPrivateNetworks: true });
    let closed = false;
    const closing = thread.close().then(() => (closed = true));
    // At once: before the next turn of the event loop, where a thread to stop would take one of its own.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(closed, true, 'closed within the turn');
    await closing;
    assert.deepEqual(await thread.send(message(`${url}/ok`)), { status: null, error: 'the service is stopping' });
    assert.equal(threads.length, 0, 'no thread was started');
    // The count sees a thread that is started: one that sends.
    const sending = new DeliveryThread({ timeoutMs: 5000, allowPrivateNetworks: true });
    try {
      assert.equal((await sending.send(message(`${url}/ok`, 'msg_counted'))).status, 204);
      assert.equal(threads.length, 1);
    } finally {
      await sending.close();
    }
  });

  it(
    'sends from a thread at a low priority (Linux: nice 10, that thread only), so deliveries run in the CPU requests leave',
    { skip: process.platform !== 'linux' && 'Linux only: a priority per thread' },
    async () => {
      /** The nice value of each of this process's threads (the 19th field of /proc's stat). */
      const nices = (): number[] =>
        readdirSync('/proc/self/task').map((tid) => {
          const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
        });
      /** Low, not the lowest: at 19 a host's other busy processes starved deliveries (busy-host.process.test.ts). */
      const LOW = 10;
      const before = nices();
      assert.ok(!before.includes(LOW), `before: no thread at nice ${LOW}`);
      const thread = new DeliveryThread({ timeoutMs: 5000, allowPrivateNetworks: true });
      try {
        assert.equal((await thread.send(message(`${url}/ok`, 'msg_nice'))).status, 204);
        const during = nices();
        assert.equal(during.filter((nice) => nice === LOW).length, 1, `the delivery thread alone: ${during.join(' ')}`);
        assert.notEqual(getPriority(), LOW, 'the main thread keeps its priority');
      } finally {
        await thread.close();
      }
    },
  );
});
