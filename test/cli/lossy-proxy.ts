import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { after } from 'node:test';

/**
 * A proxy in front of a service that drops the answer of the connections `drop` names (1-based): the
 * request is done, its answer comes and is lost on the way back, as when a connection resets. It records
 * every request's bytes. For the CLI's commands that ask once more under the same Idempotency-Key.
 */
export async function lossyProxy(upstream: number, drop: (connection: number) => boolean): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    const n = requests.push('');
    const server = connect(upstream, '127.0.0.1');
    for (const socket of [client, server]) {
      sockets.add(socket);
      socket.on('error', () => undefined).on('close', () => sockets.delete(socket));
    }
    client.on('data', (chunk: Buffer) => (requests[n - 1] += chunk.toString('latin1')));
    client.pipe(server);
    if (drop(n)) {
      server.once('data', () => {
        client.destroy();
        server.destroy();
      });
    } else server.pipe(client);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, requests };
}

/** The Idempotency-Key a recorded request carried. */
export const keyOf = (raw: string): string | undefined => /\r\nidempotency-key: ([^\r]+)\r\n/i.exec(raw)?.[1];
