import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cpuSeconds } from './proc.js';
import { freePort, SERVICE_JS, startServer, webhookBenchEnv } from './servers.js';

/**
 * What one webhook delivery costs the service, alone: a backlog of failed messages is queued again at
 * once (replay) and delivered to a loopback receiver answering 204 (in this process, on the other core);
 * reported: the service's CPU (all threads) per delivery and the deliveries per second while it drains.
 * With --compare, another build runs the same, alternately.
 *
 *   npm run bench:drain -- --messages=10000 --runs=2 [--compare=<other checkout>/dist/server/index.js] [--cpu-prof=<folder>]
 */
const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '10000' },
    runs: { type: 'string', default: '2' },
    compare: { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
});
const MESSAGES = Number(values.messages);
const TOKEN = 'bench-token-0123456789abcdef0123456789';

async function call(port: number, method: string, path: string, body?: string, type = 'application/json'): Promise<Response> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': type },
    ...(body === undefined ? {} : { body }),
  });
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response;
}

async function drainOnce(server: string): Promise<{ cpuUsPerDelivery: number; perSecond: number }> {
  let received = 0;
  let done: () => void = () => undefined;
  const all = new Promise<void>((resolve) => (done = resolve));
  const receiver = createServer((request, response) => {
    request.resume().on('end', () => {
      response.writeHead(204).end();
      if (++received === MESSAGES) done();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-drain-'));
  const port = await freePort();
  const running = await startServer({
    name: server,
    args: [...(values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}`] : []), server],
    env: webhookBenchEnv(dir, port, TOKEN),
    port,
    readyPath: '/readyz',
    logFile: join(dir, 'server.log'),
  });
  try {
    const { address } = { address: receiver.address() as { port: number } };
    const endpoint = (await (await call(port, 'POST', '/webhooks', JSON.stringify({ url: `http://127.0.0.1:${address.port}/hook` }))).json()) as {
      id: string;
    };
    // Disabled while the plants are written, their messages are failed at once; a replay queues them all.
    await call(port, 'PATCH', `/webhooks/${endpoint.id}`, JSON.stringify({ enabled: false }), 'application/merge-patch+json');
    const since = new Date().toISOString();
    const rows = Array.from({ length: MESSAGES }, (_, i) => JSON.stringify({ id: i + 1, name: `plant ${i + 1}` })).join('\n');
    await call(port, 'POST', '/plants/import', rows, 'application/x-ndjson');
    await call(port, 'PATCH', `/webhooks/${endpoint.id}`, JSON.stringify({ enabled: true }), 'application/merge-patch+json');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const cpuBefore = cpuSeconds(running.pid)!;
    const started = performance.now();
    await call(port, 'POST', `/webhooks/${endpoint.id}/replay`, JSON.stringify({ since }));
    await all;
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuSeconds(running.pid)! - cpuBefore;
    return { cpuUsPerDelivery: (cpu * 1e6) / MESSAGES, perSecond: MESSAGES / seconds };
  } finally {
    await running.stop();
    receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const servers = [{ name: 'service', js: SERVICE_JS }, ...(values.compare ? [{ name: 'compared', js: values.compare }] : [])];
console.log(`| run | server | CPU µs per delivery | deliveries/s |\n|---:|---|---:|---:|`);
for (let run = 1; run <= Number(values.runs); run++) {
  for (const server of servers) {
    const { cpuUsPerDelivery, perSecond } = await drainOnce(server.js);
    console.log(`| ${run} | ${server.name} | ${cpuUsPerDelivery.toFixed(0)} | ${perSecond.toFixed(0)} |`);
  }
}
