import type { FastifyInstance } from 'fastify';
import { connect, type AddressInfo } from 'node:net';

/** The client of `npm run bench:plugins`: prepared requests pipelined over one loopback connection, and the CPU each costs. */

/** One request on the wire: method, path, headers, no body. */
export interface WireRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
}

function wire({ method, url, headers = {} }: WireRequest): Buffer {
  const lines = [`${method} ${url} HTTP/1.1`, 'host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

const STATUS_LINE = Buffer.from('HTTP/1.1 ');
/** Requests sent at once on the connection (pipelined): the client's own cost per request stays small. */
export const BATCH = 32;

/**
 * CPU µs (user + system of this process) per request of `count` requests over a keep-alive loopback
 * connection, pipelined BATCH at a time, after a warm-up. The client in the same process is a few lines
 * that write prepared bytes and count status lines, the same for every variant, so differences between
 * variants are the server's. (Not app.inject: on this Fastify and light-my-request each injected request
 * leaves about 9 KB on the heap, which grows without end over a long loop.)
 */
export async function cpuPerRequest(app: FastifyInstance, request: WireRequest, count: number, expect: number): Promise<number> {
  const port = (app.server.address() as AddressInfo).port;
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.setNoDelay(true);
  const one = wire(request);
  let seen = 0;
  let tail = Buffer.alloc(0);
  let first = '';
  let waiting: { until: number; resolve: () => void } | undefined;
  socket.on('data', (chunk: Buffer) => {
    if (first.length < 200) first += chunk.toString('latin1');
    // Status lines, counted across chunk boundaries.
    const text = Buffer.concat([tail, chunk]);
    for (let at = text.indexOf(STATUS_LINE); at !== -1; at = text.indexOf(STATUS_LINE, at + 1)) if (at + STATUS_LINE.length > tail.length) seen++;
    tail = text.subarray(Math.max(0, text.length - STATUS_LINE.length + 1));
    if (waiting && seen >= waiting.until) waiting.resolve();
  });
  const send = (n: number) =>
    new Promise<void>((resolve) => {
      waiting = { until: seen + n, resolve };
      socket.write(n === BATCH ? batch : Buffer.concat(Array.from({ length: n }, () => one)));
    });
  const batch = Buffer.concat(Array.from({ length: BATCH }, () => one));
  await send(1);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(first)?.[1]);
  if (status !== expect) throw new Error(`${request.method} ${request.url}: ${status}, expected ${expect}: ${first}`);
  for (let i = 0; i < Math.min(count, 4000); i += BATCH) await send(BATCH);
  const before = process.cpuUsage();
  for (let i = 0; i < count; i += BATCH) await send(BATCH);
  const used = process.cpuUsage(before);
  socket.destroy();
  return (used.user + used.system) / (Math.ceil(count / BATCH) * BATCH);
}
