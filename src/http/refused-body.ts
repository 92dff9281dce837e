import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The rest of a refused body read and dropped at most before the connection is closed anyway: a client
 * sending more than this after its answer is not one to wait for.
 */
export const DISCARD_LIMIT_BYTES = 64 * 2 ** 20;

/**
 * An answer to a request refused before its body was read whole (413 for a body over the limit, a bad row of an
 * import) has its connection closed after the answer: the rest of the body is not worth reading. Node
 * would end it at once (the answer's `Connection: close`), and a client still sending then meets a closed
 * socket: the kernel answers its next bytes with a reset, which can throw away the answer before the client
 * has read it (EPIPE or ECONNRESET where a 413 was due). So the answer goes without that header, and once it
 * is written this process closes its own sending side (the client reads the answer, then the end), reads
 * and drops what the client still sends, up to DISCARD_LIMIT_BYTES, and closes the connection when the body
 * ends or passes that bound. A client that stops sending meanwhile is cut off by REQUEST_TIMEOUT_MS.
 */
export function closeAfterRefusedBody(request: FastifyRequest, reply: FastifyReply): void {
  if (request.raw.complete || reply.statusCode < 400 || reply.getHeader('connection') !== 'close') return;
  reply.removeHeader('connection');
  // Taken now: once the answer is written, Node detaches the request from its connection.
  const socket = request.raw.socket;
  reply.raw.once('finish', () => drainThenClose(request.raw, socket));
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
