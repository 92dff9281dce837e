import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The "one subscriber" of the webhook scenario: a receiver on loopback answering 204 at once, in the
 * runner's process (which is idle while the load runs, and kept off the servers' CPU), registered with
 * the service under test. It measures each delivery's lag: arrival minus the event's timestamp (when the
 * change committed).
 */

export interface DeliveryStats {
  delivered: number;
  /** Of them, those that arrived before the load ended (finish() was called). */
  deliveredDuringLoad: number;
  lagP50Ms: number;
  lagP99Ms: number;
  /** From the end of the load until the service had no pending message left. */
  drainMs: number;
}

export interface Subscriber {
  /** Waits until the service has delivered everything, then stops the receiver. */
  finish(): Promise<DeliveryStats>;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

async function call(url: string, token: string, init: { method?: string; body?: string } = {}): Promise<Response> {
  return fetch(url, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
}

export async function subscribe(servicePort: number, token: string): Promise<Subscriber> {
  const lags: number[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const at = Date.now();
      const timestamp = /"timestamp":"([^"]+)"/.exec(body)?.[1];
      if (timestamp) lags.push(at - Date.parse(timestamp));
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const service = `http://127.0.0.1:${servicePort}`;
  const created = await call(`${service}/webhooks`, token, { method: 'POST', body: JSON.stringify({ url: `http://127.0.0.1:${port}/hook` }) });
  if (created.status !== 201) throw new Error(`registering the subscriber: ${created.status} ${await created.text()}`);
  const { id } = (await created.json()) as { id: string };

  return {
    async finish() {
      const loadEnded = Date.now();
      const deliveredDuringLoad = lags.length;
      for (;;) {
        const pending = (await (await call(`${service}/webhooks/${id}/deliveries?status=pending&limit=1`, token)).json()) as unknown[];
        if (pending.length === 0) break;
        if (Date.now() - loadEnded > 300_000) throw new Error('webhook deliveries did not drain within 5 minutes');
        await sleep(100);
      }
      const drainMs = Date.now() - loadEnded;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      const sorted = [...lags].sort((a, b) => a - b);
      return { delivered: lags.length, deliveredDuringLoad, lagP50Ms: percentile(sorted, 50), lagP99Ms: percentile(sorted, 99), drainMs };
    },
  };
}
