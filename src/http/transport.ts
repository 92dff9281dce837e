import { createServer, maxHeaderSize, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Config } from '../config/config.js';
import { RequestDeadlines } from './deadlines.js';
import { statusOf, type ErrorCode } from './error-codes.js';
import { send } from './errors.js';
import { answerInProgress, answerPending, inTurn } from './connection-turns.js';
import { answeringOutsideHooks } from './framework-answers.js';
import { originForm } from './request-target.js';
import { corsAnswer, SECURITY_HEADERS, type CorsAnswer } from './security.js';

export type TransportSettings = Pick<
  Config,
  'headersTimeoutMs' | 'requestTimeoutMs' | 'keepAliveTimeoutMs' | 'maxConnections' | 'trustProxy' | 'corsOrigins'
>;

/** A request line whose method alone Node's parser refused: a token, a target, an HTTP version. */
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}) \S+ HTTP\/\d\.\d\r?\n/;

/**
 * The method of the request line Node's parser refused for its method, or undefined when that line is no
 * request line at all. The packet may hold earlier requests (pipelined): the refused line is the one where
 * the parser stopped (`bytesParsed`, within its method).
 */
function methodOf(packet: unknown, parsed: unknown): string | undefined {
  // A Buffer, as Node's clientError gives it (Fastify's types say otherwise).
  if (!Buffer.isBuffer(packet) || typeof parsed !== 'number') return undefined;
  const start = packet.lastIndexOf(0x0a, Math.max(0, parsed - 1)) + 1;
  return REQUEST_LINE.exec(packet.subarray(start, start + 512).toString('latin1'))?.[1];
}

/** Node's bound on a request's line and header fields together (16 KiB unless --max-http-header-size says otherwise). */
const HEADER_LIMIT = maxHeaderSize % 1024 === 0 ? `${maxHeaderSize / 1024} KiB` : `${maxHeaderSize} bytes`;

/** The start of a request line: a method, then a space (a header field's name is followed by a colon). */
const REQUEST_LINE_START = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,20} /;

/**
 * True when Node's parser ran past its header limit inside a request line: its URL is what is too long.
 * Node counts the request line into the limit and names both cases HPE_HEADER_OVERFLOW. Told only when the
 * line's start is in view: in the packet being parsed, or the packet is the connection's first bytes.
 */
function inRequestLine(packet: unknown, parsed: unknown, socket: Socket): boolean {
  if (!Buffer.isBuffer(packet) || typeof parsed !== 'number') return false;
  const newline = packet.lastIndexOf(0x0a, Math.max(0, parsed - 1));
  if (newline === -1 && socket.bytesRead !== packet.length) return false;
  return REQUEST_LINE_START.test(packet.subarray(newline + 1, newline + 22).toString('latin1'));
}

/** The words of the client errors Node's HTTP parser raises (the OpenAPI document's examples are made of them too). */
export const PARSER_REFUSALS = {
  request_timeout: 'the request was not received in time',
  uri_too_long: `the request URL is too long: the request line and headers together may hold ${HEADER_LIMIT}`,
  headers_too_large: `the request headers are too large: with the request line, they may hold ${HEADER_LIMIT}`,
} as const;

function methodUnknown(method: string): string {
  return `method ${method} is not one this service knows: methods are case-sensitive (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS)`;
}

/** A client error Node's HTTP parser raises before any route sees the request, answered in the Error shape. */
function clientErrorAnswer(code: string | undefined, packet?: unknown, parsed?: unknown, socket?: Socket): { code: ErrorCode; message: string } {
  const method = code === 'HPE_INVALID_METHOD' ? methodOf(packet, parsed) : undefined;
  if (method !== undefined) {
    return { code: 'method_unknown', message: methodUnknown(method) };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { code: 'request_timeout', message: PARSER_REFUSALS.request_timeout };
  if (code === 'HPE_HEADER_OVERFLOW' && socket !== undefined && inRequestLine(packet, parsed, socket)) {
    return { code: 'uri_too_long', message: PARSER_REFUSALS.uri_too_long };
  }
  if (code === 'HPE_HEADER_OVERFLOW') return { code: 'headers_too_large', message: PARSER_REFUSALS.headers_too_large };
  if (code === 'HPE_INVALID_EOF_STATE') return { code: 'invalid_request', message: 'the connection ended in the middle of the request' };
  return { code: 'invalid_request', message: 'the request is not valid HTTP/1.1' };
}

/**
 * An Error answer written on a socket itself, closing the connection: for what Node's parser or server meets
 * before any route. Always the Error shape: no request was read whose Accept could ask for another.
 */
function writeError(socket: Socket, code: ErrorCode, message: string, headers: Readonly<Record<string, string>> = {}): void {
  const status = statusOf(code);
  const body = JSON.stringify({ error: status, message, code });
  const lines = Object.entries({ ...SECURITY_HEADERS, ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nDate: ${new Date().toUTCString()}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `${lines}Connection: close\r\n\r\n${body}`,
  );
}

/**
 * Answers a malformed or too slow request on the socket itself (no request object exists yet) in the
 * Error shape, then closes the connection. Nothing is written when an answer has already begun.
 */
function clientErrorHandler(
  this: FastifyInstance,
  error: Error & { code?: string; rawPacket?: unknown; bytesParsed?: unknown },
  socket: Socket,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || refusing.has(socket)) return;
  const { code, message } = clientErrorAnswer(error.code, error.rawPacket, error.bytesParsed, socket);
  // A request id of its own, as every answer has one, in the answer and the log line alike.
  const reqId = requestIdOf(this.server);
  const headers = { 'x-request-id': reqId };
  this.log.info({ reqId, code: error.code, status: statusOf(code) }, `client error: ${message}; closing the connection`);
  refusing.add(socket);
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    // The request's own bytes still trickle in, read by the parser into that request: closed at once.
    if (socket.writable && !answerInProgress(socket)) writeError(socket, code, message, headers);
    socket.destroy();
    return;
  }
  const pending = answerPending(socket);
  if (pending === undefined) {
    if (!socket.writable || answerInProgress(socket)) socket.destroy();
    else refuseAndClose(socket, code, message, headers);
    return;
  }
  // Bytes Node cannot parse after whole requests still being answered (pipelined): those answers first,
  // then the refusal. After a request that said `Connection: close` (HPE_CLOSED_CONNECTION), no refusal:
  // Node closes the connection after that request's answer, as the client asked.
  socket.pause();
  if (error.code === 'HPE_CLOSED_CONNECTION') return;
  pending.once('finish', () => {
    if (socket.writable) refuseAndClose(socket, code, message, headers);
    else socket.destroy();
  });
}

/** Connections refused on the socket: Node's parser reports its error again on every read after the first. */
const refusing = new WeakSet<Socket>();

/** How long a refused connection's further bytes are read and dropped before it is closed anyway. */
const LINGER_MS = 2000;

/**
 * Writes the refusal, then closes the connection without resetting it: a socket closed with the client's
 * bytes unread is reset by the kernel, and a client still sending (a 100 kB URL) then loses the answer.
 * Its bytes are read and dropped (Node's parser, in error, reports them here, ignored) until the client
 * closes its side, for LINGER_MS at most.
 */
function refuseAndClose(socket: Socket, code: ErrorCode, message: string, headers: Readonly<Record<string, string>>): void {
  writeError(socket, code, message, headers);
  socket.end();
  socket.resume();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/**
 * The two requests Node's server answers itself unless told otherwise, in its own way: an `Expect` other
 * than 100-continue (an empty 417) and CONNECT (the connection dropped without a word). Both are answered
 * in the Error shape here, and their connection closed (their body, or tunnel, is never read).
 */
function answerWhatNodeWould(server: FastifyInstance['server']): void {
  // An Expect other than 100-continue: Node would answer 417 alone (no request id, no problem details);
  // handed to the app as any request, whose first hook refuses it (http/request-target.ts). The
  // connection closes after the answer: the client may send the body it held back, or may not.
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    response.shouldKeepAlive = false;
    server.emit('request', request, response);
  });
  server.on('connect', (_request: IncomingMessage, socket: Socket) => {
    writeError(socket, 'method_not_allowed', 'method CONNECT is not allowed: this service is not a proxy', {
      allow: 'GET, HEAD, POST, PUT, PATCH, DELETE',
      'x-request-id': requestIdOf(server),
    });
    socket.destroySoon();
  });
}

/** The longest path parameter the router matches: every path parameter is an id, and none is near as long. */
export const MAX_PARAM_LENGTH = 200;

/**
 * Errors the router raises before routing: a URL that does not decode; a path parameter past
 * MAX_PARAM_LENGTH, which can be no id (every route's parameter is its `id`), and so gets the id rule's 400.
 * No hook runs for them: the headers every answer carries are set here, CORS's too (CORS_ORIGINS), so that a
 * browser's page reads the refusal as it reads any other, after a preflight answered as any other; the
 * access line, metrics and span come from http/framework-answers.ts.
 */
function frameworkErrors(cors: CorsAnswer | undefined): NonNullable<FastifyServerOptions['frameworkErrors']> {
  return (error, request, reply) => {
    answeringOutsideHooks(request, reply);
    reply.headers(SECURITY_HEADERS).header('x-request-id', request.id);
    if (cors?.(request, reply) === true) return;
    if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') send(reply, 'invalid_id', idTooLong(), 'params.id');
    else send(reply, 'invalid_request', 'the URL is not validly percent-encoded');
  };
}

/** The 400 of a path id past MAX_PARAM_LENGTH. */
export function idTooLong(): string {
  return `params.id must be an id, and no id is longer than ${MAX_PARAM_LENGTH} characters`;
}

/**
 * TRUST_PROXY as Fastify takes it. A hop count trusts that many proxies in front, whatever their addresses
 * (Fastify 5 no longer reads a number so: its proxy-addr trust function is given one); addresses and CIDRs
 * trust only those proxies, which is safer when the service can also be reached directly.
 */
function trustProxy(setting: TransportSettings['trustProxy']): FastifyServerOptions['trustProxy'] {
  if (typeof setting === 'number') return (_address: string, hop: number) => hop < setting;
  return setting;
}

/**
 * Server options against slow and abusive clients: all headers within HEADERS_TIMEOUT_MS (Node checks
 * this on a timer; its default period, 30 s, is shortened so that the timeout is enforced within a
 * quarter of its length), idle keep-alive connections closed after KEEP_ALIVE_TIMEOUT_MS. The whole
 * request within REQUEST_TIMEOUT_MS is enforced by RequestDeadlines (configureServer), per request.
 */
export function transportOptions(settings: TransportSettings, requestId: () => string): Partial<FastifyServerOptions> {
  const checkEvery = Math.max(50, Math.min(1000, Math.floor(settings.headersTimeoutMs / 4)));
  return {
    // TRUST_PROXY: request.ip is then the client address the trusted proxies forwarded (rate limits, logs).
    trustProxy: trustProxy(settings.trustProxy),
    // The server made here, so that Fastify's handler is called in each request's turn (configureServer),
    // not as Node emits the request. requireHostHeader off: Node would answer a request without Host with
    // an empty 400 of its own; http/security.ts refuses it in the Error shape instead. No requestTimeout:
    // RequestDeadlines enforces one per request.
    serverFactory: (handler) => {
      const server = createServer({
        headersTimeout: settings.headersTimeoutMs,
        connectionsCheckingInterval: checkEvery,
        requireHostHeader: false,
        requestTimeout: 0,
      });
      server.keepAliveTimeout = settings.keepAliveTimeoutMs;
      fastifyHandlers.set(server, handler);
      requestIds.set(server, requestId);
      return server;
    },
    clientErrorHandler,
    frameworkErrors: frameworkErrors(settings.corsOrigins.length > 0 ? corsAnswer(settings.corsOrigins) : undefined),
  };
}

/**
 * The request ids of each server made by transportOptions (the app's genReqId): the answers written on the
 * socket, before any request object exists, take theirs from it too.
 */
const requestIds = new WeakMap<Server, () => string>();

/** The next request id of the server's app; a random one for a server made otherwise (never a throw: this answers a client error). */
function requestIdOf(server: Server): string {
  return requestIds.get(server)?.() ?? randomUUID();
}

/** Fastify's request handler of each server made by transportOptions, which configureServer calls in turn. */
const fastifyHandlers = new WeakMap<Server, (request: IncomingMessage, response: ServerResponse) => void>();

/**
 * Connections beyond the cap are closed as soon as they are accepted.
 *
 * httpAllowHalfOpen: a client that half-closes its side after sending a whole request (as `nc`, `curl
 * --data … -N` and some proxies do) still gets its answer. With Node's default (false) the server ends
 * the connection when the client's side ends, so the answer to a request that may already have been
 * carried out (a POST committed) is never written. The property is not in Node's documentation; it is
 * set on every http.Server by its constructor and read when a client ends its side (checked in Node
 * 20.20 and 24.x: lib/_http_server.js, socketOnEnd). test/http/transport.test.ts pins the behaviour.
 * Answers the request deadlines, whose timer the app starts and stops (app/pipeline.ts).
 */
export function configureServer(app: FastifyInstance, settings: TransportSettings): RequestDeadlines {
  app.server.maxConnections = settings.maxConnections;
  // No count of header fields: Node dropped those past its count (2,000 lines) without a word, so that a
  // stale If-Match or a second Authorization there went unseen. Their size is bounded all the same
  // (16 KiB: 431 headers_too_large).
  app.server.maxHeadersCount = 0;
  answerWhatNodeWould(app.server);
  (app.server as { httpAllowHalfOpen?: boolean }).httpAllowHalfOpen = true;
  // A request not received whole in time is answered 408 on its socket, as Node itself would.
  const deadlines = new RequestDeadlines(settings.requestTimeoutMs, (request) =>
    clientErrorHandler.call(app, Object.assign(new Error('request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), request.socket),
  );
  const handler = fastifyHandlers.get(app.server);
  if (handler === undefined) throw new Error('configureServer needs the server of transportOptions');
  // Tracked from its turn on: a pipelined request's body is not read while it waits.
  const serve = (request: IncomingMessage, response: ServerResponse): void => {
    deadlines.track(request);
    handler(request, response);
  };
  app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (request.url !== undefined && request.url.charCodeAt(0) !== 0x2f) request.url = originForm(request.url);
    inTurn(request, response, serve);
  });
  return deadlines;
}
