import { connect, type Socket } from 'node:net';
import type { after as afterHook } from 'node:test';
import { until } from '../toolkit.js';

/** A client's keep-alive connection that one request has tied to the worker serving when it was made. */
export interface HeldConnection {
  readonly socket: Socket;
  /** What arrived on it since it was made, or since the last `clear()`. */
  received(): string;
  clear(): void;
  /** Whether the server has closed it. */
  closed(): boolean;
}

/**
 * Opens a keep-alive connection to `port` and has a GET /healthz answered on it, so that it belongs to the
 * worker serving now (a reload's old worker, once the reload starts); then it stays idle until the test
 * writes on it. Destroyed after the test.
 */
export async function holdConnection(after: typeof afterHook, port: number): Promise<HeldConnection> {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  let closed = false;
  socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
  socket.on('close', () => (closed = true));
  // A connection the server resets is seen by `closed()`; the error itself is not the test's subject.
  socket.on('error', () => undefined);
  after(() => socket.destroy());
  socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  await until(() => received.includes('"status":"ok"'), 'the answer on the held connection', { timeoutMs: 30_000 });
  received = '';
  return {
    socket,
    received: () => received,
    clear: () => (received = ''),
    closed: () => closed,
  };
}
