import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/** The load generator's connections: raw keep-alive sockets, one request in flight each, answers parsed just enough to count them. */

const CRLFCRLF = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = 'content-length:';

/** Parses the status and length of one HTTP/1.1 answer at the start of buffer; undefined until it is whole. */
function parseResponse(buffer: Buffer): { status: number; length: number } | undefined {
  const headEnd = buffer.indexOf(CRLFCRLF);
  if (headEnd === -1) return undefined;
  const head = buffer.toString('latin1', 0, headEnd).toLowerCase();
  const status = Number(head.slice(9, 12));
  const at = head.indexOf(CONTENT_LENGTH);
  let bodyLength = 0;
  if (at !== -1) {
    const end = head.indexOf('\r\n', at);
    bodyLength = Number(head.slice(at + CONTENT_LENGTH.length, end === -1 ? undefined : end).trim());
  } else if (head.includes('transfer-encoding: chunked')) {
    // Chunked answers end with a zero-size chunk: good enough for the small answers measured here.
    const end = buffer.indexOf('\r\n0\r\n\r\n', headEnd);
    if (end === -1) return undefined;
    return { status, length: end + 7 };
  }
  const length = headEnd + 4 + bodyLength;
  return buffer.length >= length ? { status, length } : undefined;
}

/** What a pool of connections tells the loop that drives it. */
export interface ConnectionEvents {
  /** The connection can take a request (it connected, or its last answer came): send it now or later with send(since). */
  ready(send: (since: number) => void): void;
  /** An answer came, `latencyMs` after the `since` it was sent with. */
  answered(status: number, latencyMs: number): void;
  /** A socket error, or a connection closed with a request in flight before the pool was stopped. */
  failed(): void;
}

/**
 * `count` keep-alive raw connections to the server, one request in flight each (the next of `next`): a
 * connection the server closes is replaced after 10 ms, as a real client's pool would, until stop().
 */
export function connectionPool(port: number, count: number, next: () => Buffer, events: ConnectionEvents): { stop(): void } {
  const sockets = new Set<Socket>();
  let stopping = false;
  const open = (): void => {
    const socket = connect({ port, host: '127.0.0.1', noDelay: true });
    sockets.add(socket);
    let pending: Buffer | undefined;
    let since = 0;
    let inFlight = false;
    const send = (at: number): void => {
      inFlight = true;
      since = at;
      socket.write(next());
    };
    const ready = (): void => {
      if (stopping) {
        socket.destroy();
        return;
      }
      events.ready(send);
    };
    socket.on('connect', ready);
    socket.on('data', (chunk: Buffer) => {
      pending = pending === undefined ? chunk : Buffer.concat([pending, chunk]);
      const response = parseResponse(pending);
      if (!response) return;
      pending = response.length < pending.length ? pending.subarray(response.length) : undefined;
      inFlight = false;
      events.answered(response.status, performance.now() - since);
      ready();
    });
    socket.on('error', () => events.failed());
    socket.on('close', () => {
      sockets.delete(socket);
      if (inFlight && !stopping) events.failed();
      if (!stopping) setTimeout(open, 10);
    });
  };
  for (let i = 0; i < count; i++) open();
  return {
    stop() {
      stopping = true;
      for (const socket of sockets) socket.destroy();
    },
  };
}
