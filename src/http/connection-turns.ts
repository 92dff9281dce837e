import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Pipelined requests (sent on one connection before the answer to the one before) taken in turn, as RFC
 * 9112 §9.3.2 has it: requests may be carried out together only while all of them are safe. Node emits
 * `request` for each pipelined request as soon as it is parsed and only queues the answers; without turns a
 * GET sent after a PUT read the plant before the PUT, and a DELETE overtook the PATCH sent before it.
 *
 * A request waits for the answer before it to finish when either is unsafe, or when that one waits itself.
 * A connection's requests that are not pipelined (the usual case) find the answer before them finished:
 * one WeakMap read and a property read.
 */

/** The answer each connection is writing or wrote last (its request is `response.req`). */
const lastAnswer = new WeakMap<Socket, ServerResponse>();

/** Answers whose request waits for its turn. */
const waiting = new WeakSet<ServerResponse>();

/** Answers that close their connection (`Connection: close`, the process stopping): nothing after them is served. */
const closing = new WeakSet<ServerResponse>();

/**
 * The answer closes its connection: a request pipelined after it is never carried out. Node reads that
 * request as the answer finishes (the answer's request body dumped), before it ends the connection, and
 * served, it was carried out (a POST committed) with no one to read its answer; RFC 9112 §9.6 has the
 * client send it again, on another connection, as one the server did not act on.
 */
export function closesConnection(response: ServerResponse): void {
  closing.add(response);
}

function isSafe(method: string | undefined): boolean {
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
}

/**
 * Calls `serve` when the request's turn comes: now, or once the answer before it on its connection has
 * finished. A request whose turn comes after its connection stopped being writable (the answer before it
 * closed the connection, or the client went) is never served: no one could read its answer.
 */
export function inTurn(
  request: IncomingMessage,
  response: ServerResponse,
  serve: (request: IncomingMessage, response: ServerResponse) => void,
): void {
  const socket = request.socket;
  const previous = lastAnswer.get(socket);
  lastAnswer.set(socket, response);
  if (previous !== undefined && closing.has(previous)) return;
  if (previous === undefined || previous.writableFinished || (isSafe(request.method) && isSafe(previous.req.method) && !waiting.has(previous))) {
    serve(request, response);
    return;
  }
  waiting.add(response);
  // Node's own 'finish' listener (registered first) has by then ended the socket if that answer closes it.
  previous.once('finish', () => {
    waiting.delete(response);
    if (socket.writable && !closing.has(previous)) serve(request, response);
  });
}

/**
 * The answer on this connection not yet finished, for a request Node read whole, when there is one: a
 * request Node then cannot parse came after it, and its refusal has to wait for that answer.
 */
export function answerPending(socket: Socket): ServerResponse | undefined {
  const response = lastAnswer.get(socket);
  return response !== undefined && !response.writableFinished && response.req.complete ? response : undefined;
}

/** True while an answer on this connection has begun and not finished: nothing may be written into it. */
export function answerInProgress(socket: Socket): boolean {
  const response = lastAnswer.get(socket);
  return response !== undefined && response.headersSent && !response.writableFinished;
}
