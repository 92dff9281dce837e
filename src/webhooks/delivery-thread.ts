import { Worker } from 'node:worker_threads';
import type { DueMessage } from '../store/webhook-store.js';
import type { AttemptOutcome } from './delivery.js';
import type { SendReply, SendRequest, ThreadSenderOptions } from './delivery-worker.js';
import { builtFile } from '../built.js';

const WORKER_JS = builtFile('src/webhooks/delivery-worker.js');
/** How long a stopping thread may take to end the attempts it still holds. */
const CLOSE_GRACE_MS = 1000;

/**
 * Webhook deliveries sent from a thread of their own (delivery-worker.ts runs the Sender there): the HTTP
 * client, TLS, the signatures and the answers' bytes, most of a delivery's CPU, leave the main thread, so
 * that on a machine with a second core deliveries run beside the requests instead of between them, and on
 * one core the main thread's busy share (http/request-pressure.ts) measures the requests alone. The
 * dispatcher keeps claiming and recording (the store is the main thread's); what it sends in one turn
 * goes to the thread in one message, and the outcomes come back likewise. The thread starts with the first
 * delivery, or at start where the store has endpoints (`warmUp`): a process that sends none is spared its
 * memory.
 */
export class DeliveryThread {
  private worker: Worker | undefined;
  private next = 0;
  private readonly pending = new Map<number, (outcome: AttemptOutcome) => void>();
  private outbox: SendRequest[] = [];
  private closed = false;

  constructor(private readonly options: ThreadSenderOptions) {}

  send(message: DueMessage, traceHeaders?: Readonly<Record<string, string>>): Promise<AttemptOutcome> {
    if (this.closed) return Promise.resolve({ status: null, error: 'the service is stopping' });
    const id = ++this.next;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      if (this.outbox.length === 0) setImmediate(() => this.flush());
      this.outbox.push(traceHeaders === undefined ? { id, message } : { id, message, traceHeaders });
    });
  }

  /**
   * Starts the thread now rather than at the first delivery (process/background.ts, where the store has
   * endpoints); the thread loads undici as it starts, on its own core.
   */
  async warmUp(): Promise<void> {
    if (this.closed || this.worker !== undefined) return;
    const worker = (this.worker = this.start());
    await new Promise<void>((resolve, reject) => {
      worker.once('online', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the delivery thread exited with code ${code} as it started`)));
    });
  }

  /** Sends the turn's requests to the thread, started at the first. */
  private flush(): void {
    const batch = this.outbox;
    this.outbox = [];
    if (batch.length === 0) return;
    this.worker ??= this.start();
    this.worker.postMessage(batch);
  }

  private start(): Worker {
    const worker = new Worker(WORKER_JS, { workerData: this.options, resourceLimits: { maxYoungGenerationSizeMb: 8 } });
    worker.on('message', (replies: SendReply[]) => {
      for (const { id, outcome } of replies) {
        this.pending.get(id)?.(outcome);
        this.pending.delete(id);
      }
    });
    // A thread that fails ends the attempts it held (recorded as failed, retried by the schedule), and the
    // next delivery starts another.
    const failed = (reason: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const resolve of this.pending.values()) resolve({ status: null, error: `the delivery thread stopped: ${reason}` });
      this.pending.clear();
    };
    worker.on('error', (error) => failed(error.message));
    worker.on('exit', (code) => failed(`exit code ${code}`));
    return worker;
  }

  /**
   * Ends the thread: at once when it holds no attempt, else once they have ended or CLOSE_GRACE_MS have
   * passed (the dispatcher has waited for them already; one still in flight is sent again after its lease).
   */
  async close(): Promise<void> {
    this.closed = true;
    this.flush();
    const worker = this.worker;
    if (worker === undefined) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('close');
    const timer = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }
}
