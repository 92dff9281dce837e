import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The rest of a refused body read and dropped at most before the connection is closed anyway: a client
 * sending more than this after its answer is not one to wait for.
 */
export const DISCARD_LIMIT_BYTES = 64 * 2 ** 20;

/**
 * The rest of a refused body small enough to read and drop while keeping the connection: a declared length
 * up to this (a 415 for a JSON body sent as text/plain, a 413 a little over BODY_LIMIT).
 */
export const KEEP_ALIVE_DISCARD_BYTES = 2 ** 20;

/**
 * An answer to a request refused before its body was read whole (413 for a body over the limit, 415, a bad
 * row of an import). Fastify marks it `Connection: close`: the rest of the body is not worth reading.
 *
 * - When the rest has a known length of KEEP_ALIVE_DISCARD_BYTES or less, the client keeps its
 *   connection and the process is not `stopping` (its drain closes every connection), the header goes: Node reads and drops the rest after the answer, and the connection serves
 *   the client's next request, as after any other refusal.
 * - Else the connection closes, and the answer says so (`Connection: close`): a keep-alive client (Node's
 *   http.Agent, a proxy's pool) told nothing sends its next request on it, to be dropped with a reset.
 *   Node would destroy the socket as soon as the answer is written, and a client still sending then meets
 *   a closed socket: the kernel answers its next bytes with a reset, which can throw away the answer
 *   before the client has read it (EPIPE or ECONNRESET where a 413 was due). So once the answer is
 *   written this process closes its own sending side only (the client reads the answer, then the end),
 *   reads and drops what the client still sends, up to DISCARD_LIMIT_BYTES, and closes the connection when
 *   the body ends or passes that bound. A client that stops sending meanwhile is cut off by
 *   REQUEST_TIMEOUT_MS.
 */
export function closeAfterRefusedBody(request: FastifyRequest, reply: FastifyReply, stopping: boolean): void {
  if (request.raw.complete || reply.statusCode < 400 || reply.getHeader('connection') !== 'close') return;
  if (!stopping && keptOpen(request.raw)) {
    reply.removeHeader('connection');
    return;
  }
  // Taken now: once the answer is written, Node detaches the request from its connection.
  const socket = request.raw.socket;
  reply.raw.once('finish', () => {
    // Node's own 'finish' listener ran first and asked the socket to end, then be destroyed once ended
    // (net.Socket's destroySoon): the end stays, the destroy is drainThenClose's to do.
    // eslint-disable-next-line @typescript-eslint/unbound-method -- the very function destroySoon gave to once(), to take it back
    socket.removeListener('finish', socket.destroy);
    drainThenClose(request.raw, socket);
  });
}

/** Whether the refused request's connection can serve the next one: HTTP/1.1 keep-alive, a small body of known length. */
function keptOpen(request: IncomingMessage): boolean {
  const { headers } = request;
  if (request.httpVersionMinor !== 1 || headers['transfer-encoding'] !== undefined || /(?:^|\W)close(?:$|\W)/i.test(headers.connection ?? '')) {
    return false;
  }
  const length = Number(headers['content-length']);
  return Number.isSafeInteger(length) && length <= KEEP_ALIVE_DISCARD_BYTES;
}

function drainThenClose(request: IncomingMessage, socket: Socket): void {
  const close = () => void socket.destroy();
  if (request.complete || socket.destroyed) return close();
  socket.end();
  let dropped = 0;
  request.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DISCARD_LIMIT_BYTES) close();
  });
  request.once('end', close);
  request.once('error', close);
  socket.once('end', close);
  request.resume();
}
