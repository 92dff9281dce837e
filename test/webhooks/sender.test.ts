import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { DueMessage } from '../../src/store/webhook-store.js';
import { Sender } from '../../src/webhooks/delivery.js';

/**
 * One attempt's whole time is bounded by WEBHOOK_TIMEOUT_MS, whatever the receiver does within undici's own
 * per-phase time-outs, and its clock starts when its request does: the first delivery of a process loads
 * undici first (which took 130-234 ms of a 300 ms budget), outside its time.
 */

/** Generous beside a loopback request, so that only a receiver that never finishes meets it. */
const TIMEOUT_MS = 1000;

function message(url: string): DueMessage {
  return {
    seq: '1',
    endpointId: 'ep_1',
    url,
    secrets: ['whsec_' + Buffer.alloc(32, 7).toString('base64')],
    eventId: 'msg_1',
    payload: '{}',
    roundAttempts: 0,
  };
}

function pendingTimeouts(): number {
  return process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
}

describe('an attempt to deliver', () => {
  let server: Server;
  let url: string;
  /** Settled by a dripping answer when its connection closes, with the bytes dripped by then. */
  let dripClosed: Promise<number>;
  const sender = new Sender({ timeoutMs: TIMEOUT_MS, allowPrivateNetworks: true });

  before(async () => {
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      request.resume();
      if (request.url === '/quick') {
        response.writeHead(204).end();
        return;
      }
      // Headers at once, then a byte every 50 ms until the connection closes: undici's phases are never
      // idle for long, and the answer never ends, so only the attempt's own deadline can end it.
      response.writeHead(200, { 'content-type': 'text/plain' });
      let sent = 0;
      const drip = setInterval(() => (response.write('.'), sent++), 50);
      dripClosed = once(response, 'close').then(() => {
        clearInterval(drip);
        return sent;
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    await sender.close();
    server.close();
  });

  // First: this is the process's first delivery, the one that loads undici.
  it('starts its clock when its request starts, not while the HTTP client loads', async () => {
    const timers = pendingTimeouts();
    const sending = sender.send(message(`${url}/quick`));
    assert.equal(pendingTimeouts(), timers, 'no deadline runs while undici loads');
    assert.deepEqual(await sending, { status: 204, error: null });
  });

  it('is ended at WEBHOOK_TIMEOUT_MS when the receiver never finishes its body, though it never falls silent (its 2xx counts)', async () => {
    const outcome = await sender.send(message(`${url}/drip`));
    assert.deepEqual(outcome, { status: 200, error: null });
    assert.ok((await dripClosed) > 0, 'the connection was closed while the receiver was still answering');
  });

  it('leaves no timer behind once answered', async () => {
    const before = pendingTimeouts();
    for (let i = 0; i < 20; i++) assert.deepEqual(await sender.send(message(`${url}/quick`)), { status: 204, error: null });
    // A deadline not cleared would hold the process open for WEBHOOK_TIMEOUT_MS after every attempt.
    assert.ok(pendingTimeouts() <= before, `${pendingTimeouts()} timers pending, ${before} before`);
  });
});
