import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { DueMessage } from '../store/webhook-store.js';
import { Sender, type AttemptOutcome } from './delivery.js';

/**
 * The delivery thread (started by delivery-thread.ts): the Sender, in a thread of its own. It takes the
 * messages of one turn of the main thread in one message, sends each as the Sender does (signed, bounded by
 * WEBHOOK_TIMEOUT_MS, connected only where the network guard allows), and answers the outcomes that end in
 * one of its turns in one message.
 */

/** The Sender's settings, as a thread can be given them (no resolver: the system's). */
export interface ThreadSenderOptions {
  timeoutMs: number;
  allowPrivateNetworks: boolean;
}

export interface SendRequest {
  id: number;
  message: DueMessage;
  traceHeaders?: Readonly<Record<string, string>>;
}

export interface SendReply {
  id: number;
  outcome: AttemptOutcome;
}

/**
 * The thread's scheduling priority: nice 10, low, not the lowest. The kernel then gives it the CPU the
 * request path leaves (the gaps while a commit waits for the disk, a core requests do not fill) and a
 * tenth or so of what requests want; the dispatcher's gate (http/request-pressure.ts) is what holds
 * deliveries back while requests need the whole process. Not nice 19: a nice value weighs against every
 * busy thread of the host, not only the service's own, and at 19 (1.5% of a core against each) deliveries
 * waited on a host whose cores other work kept busy (20 s and more beside three busy processes a core,
 * against 4 s at 10: test/webhooks/busy-host.process.test.ts). Linux names a thread by its id in setpriority
 * (os.setPriority takes it as a pid), found as /proc/thread-self's target, `<pid>/task/<tid>`. Elsewhere
 * the thread keeps the process's priority.
 */
const DELIVERY_NICE = 10;

function lowerPriority(): boolean {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
    if (!Number.isInteger(tid) || tid <= 0) return false;
    setPriority(tid, DELIVERY_NICE);
    return true;
  } catch {
    return false;
  }
}

const port = parentPort!;
lowerPriority();
const sender = new Sender(workerData as ThreadSenderOptions);
// The thread starts for a delivery, or to be ready for one (DeliveryThread.warmUp): its HTTP client is loaded
// now, on this thread. A failure is not lost: the first attempt loads it again and records why it failed.
sender.warmUp().catch(() => undefined);
let replies: SendReply[] = [];
let inFlight = 0;
let closing = false;

function reply(id: number, outcome: AttemptOutcome): void {
  if (replies.length === 0) setImmediate(flush);
  replies.push({ id, outcome });
}

function flush(): void {
  port.postMessage(replies);
  replies = [];
  if (closing && inFlight === 0) void stop();
}

async function stop(): Promise<void> {
  await sender.close();
  port.close();
}

port.on('message', (message: SendRequest[] | 'close') => {
  if (message === 'close') {
    closing = true;
    if (inFlight === 0 && replies.length === 0) void stop();
    return;
  }
  for (const { id, message: due, traceHeaders } of message) {
    inFlight++;
    void sender
      .send(due, traceHeaders)
      .catch((error: unknown) => ({ status: null, error: error instanceof Error ? error.message : String(error) }))
      .then((outcome) => {
        inFlight--;
        reply(id, outcome);
      });
  }
});
