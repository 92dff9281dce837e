import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { after } from 'node:test';
import { Webhook } from 'standardwebhooks';

/** One delivery as a receiver saw it. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** How the receiver answers a delivery: a status, headers, and a delay before answering (after `after`, when given). */
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
  /** The answer waits for this first: deliveries held unanswered until the test lets them go. */
  after?: Promise<void>;
}

/**
 * A webhook receiver on loopback (node:http), as a subscriber would run one: it records every delivery
 * and answers as `answer` says (204 by default).
 */
export class Receiver {
  readonly received: Received[] = [];
  /** webhook-ids that arrived while an earlier delivery of the same id was still unanswered: sent twice at once. */
  readonly concurrent: string[] = [];
  /** Deliveries arrived and not answered yet, and the most there were at once (a test may reset it). */
  inFlight = 0;
  maxInFlight = 0;
  private readonly unanswered = new Map<string, number>();
  answer: (delivery: Received, index: number) => Answer = () => ({ status: 204 });
  private waiters: Array<() => void> = [];
  private readonly server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const delivery = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      const index = this.received.push(delivery) - 1;
      const id = String(request.headers['webhook-id']);
      if (this.unanswered.has(id)) this.concurrent.push(id);
      this.unanswered.set(id, (this.unanswered.get(id) ?? 0) + 1);
      this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
      const { status, headers = {}, delayMs = 0, after } = this.answer(delivery, index);
      const respond = () => {
        const left = (this.unanswered.get(id) ?? 1) - 1;
        if (left === 0) this.unanswered.delete(id);
        else this.unanswered.set(id, left);
        this.inFlight--;
        if (!response.destroyed) response.writeHead(status, headers).end();
      };
      void (after ?? Promise.resolve()).then(() => setTimeout(respond, delayMs));
      for (const wake of this.waiters.splice(0)) wake();
    });
  });

  static async start(cleanup: typeof after): Promise<Receiver> {
    const receiver = new Receiver();
    const server = receiver.server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup(() => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });
    return receiver;
  }

  get url(): string {
    const { port } = this.server.address() as { port: number };
    return `http://127.0.0.1:${port}/hooks`;
  }

  /** Waits until `count` deliveries have arrived (in all), or fails after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 10_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`expected ${count} deliveries, got ${this.received.length} after ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => (clearTimeout(timer), resolve()));
      });
    }
    return this.received.slice(0, count);
  }
}

/**
 * Verifies a delivery with the standardwebhooks package (an independent implementation, not ours) and
 * returns its parsed body, ids kept as text so that no digit is lost.
 */
export function verify(secret: string, delivery: Received): { type: string; timestamp: string; data: Record<string, unknown> } {
  const headers = {
    'webhook-id': String(delivery.headers['webhook-id']),
    'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
    'webhook-signature': String(delivery.headers['webhook-signature']),
  };
  new Webhook(secret).verify(delivery.body, headers);
  return JSON.parse(delivery.body.replace(/"id":(-?\d+)/, '"id":"$1"')) as { type: string; timestamp: string; data: Record<string, unknown> };
}
