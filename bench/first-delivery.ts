import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, SERVICE_JS, startServer, webhookBenchEnv, type Running } from './servers.js';

/**
 * What a restarted process's first webhook delivery costs its requests: the service is started on a store
 * that has a webhook endpoint (made by a first start, then stopped), and once ready it is read at a steady
 * 500 GETs a second for 2 s, one POST half a second in (whose delivery is the process's first). Reported:
 * the time from spawn to ready, and the GETs' latency (p50, p99, max). One core by default (`--cpus=0,1`:
 * two, where deliveries go from a thread of their own). With --compare, another build runs the same,
 * alternately.
 *
 *   npm run bench:first-delivery -- --runs=3 [--cpus=0,1] [--compare=<other checkout>/dist/server/index.js]
 */
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    cpus: { type: 'string', default: '0' },
    compare: { type: 'string' },
  },
});
const TOKEN = 'bench-token-0123456789abcdef0123456789';
const GETS = 1000;
const GET_EVERY_MS = 2;
const POST_AT = 250;

async function call(port: number, method: string, path: string, body?: unknown): Promise<Response> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  await response.arrayBuffer();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status}`);
  return response;
}

function start(server: string, dir: string, port: number): Promise<Running> {
  return startServer({
    name: server,
    args: [server],
    env: { ...webhookBenchEnv(dir, port, TOKEN), SHUTDOWN_DRAIN_MS: '0' },
    port,
    readyPath: '/readyz',
    cpus: values.cpus,
    logFile: join(dir, 'server.log'),
  });
}

/** The GETs' latencies (ms, sorted), with the POST sent among them. */
async function readAround(port: number): Promise<number[]> {
  const latencies: number[] = [];
  const requests: Array<Promise<unknown>> = [];
  const began = performance.now();
  for (let i = 0; i < GETS; i++) {
    // Open loop: each GET leaves at its time, whether or not the ones before it were answered.
    const at = began + i * GET_EVERY_MS;
    while (performance.now() < at) await new Promise((resolve) => setImmediate(resolve));
    if (i === POST_AT) requests.push(call(port, 'POST', '/plants', { id: 2, name: 'Palm' }));
    const sent = performance.now();
    requests.push(call(port, 'GET', '/plants/1').then(() => latencies.push(performance.now() - sent)));
  }
  await Promise.all(requests);
  return latencies.sort((a, b) => a - b);
}

async function once(server: string, receiver: Server): Promise<{ readyMs: number; latencies: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-first-delivery-'));
  const port = await freePort();
  try {
    const first = await start(server, dir, port);
    try {
      const { port: receiverPort } = receiver.address() as { port: number };
      await call(port, 'POST', '/webhooks', { url: `http://127.0.0.1:${receiverPort}/hook` });
      await call(port, 'POST', '/plants', { id: 1, name: 'Fern' });
    } finally {
      await first.stop();
    }
    const second = await start(server, dir, port);
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { readyMs: second.readyMs, latencies: await readAround(port) };
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const receiver = createServer((request, response) => void request.resume().on('end', () => response.writeHead(204).end()));
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const servers = [{ name: 'service', js: SERVICE_JS }, ...(values.compare ? [{ name: 'compared', js: values.compare }] : [])];
console.log(`CPUs ${values.cpus}\n\n| run | server | spawn to ready, ms | GET p50 ms | p99 ms | max ms |\n|---:|---|---:|---:|---:|---:|`);
const at = (sorted: number[], share: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))]!.toFixed(1);
for (let run = 1; run <= Number(values.runs); run++) {
  for (const server of servers) {
    const { readyMs, latencies } = await once(server.js, receiver);
    console.log(
      `| ${run} | ${server.name} | ${readyMs.toFixed(0)} | ${at(latencies, 0.5)} | ${at(latencies, 0.99)} | ${latencies.at(-1)!.toFixed(1)} |`,
    );
  }
}
receiver.close();
