import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, preParsingHookHandler } from 'fastify';

/**
 * `Expect: 100-continue` (RFC 9110 §10.1.1): the client holds its body back until the server says it wants
 * it, so that a request refused on its head alone costs no upload. Node answers `100 Continue` the moment
 * the head arrives, before any check: an unauthenticated client, one over its rate limit, one whose body is
 * over the limit, was asked for its body (an import's hundreds of megabytes) only to be refused once it had
 * sent it. Here the 100 is sent as the body is about to be read: after the request's onRequest hooks (the
 * Host and target checks, authentication, the rate limit), unless its declared length is over the route's
 * limit (413 on the head: Fastify's parser, the import's handler). A refusal before that is final without a
 * 100, and Node then closes the connection after it (the client may send the body it held back, or not).
 * Anything else is asked for as before, a 415 included: a wrong guess of what will be read would leave
 * the client waiting for a 100 while the service waits for the body.
 */

/** The requests Node has not answered 100 for (a 100-continue expectation on HTTP/1.1, Node's own test of the header). */
const awaiting = new WeakSet<IncomingMessage>();

/** Sends the 100 of a request that awaits one, but for a declared length over the route's limit. A request without Expect pays one property read. */
const continueIfWanted: preParsingHookHandler = (request, reply, payload, done) => {
  if (request.headers.expect !== undefined && awaiting.delete(request.raw)) {
    if (!(Number(request.headers['content-length']) > request.routeOptions.bodyLimit)) reply.raw.writeContinue();
  }
  done(null, payload);
};

/**
 * Takes the 100 from Node (its `checkContinue` event, whose request is then served as any other) and sends
 * it from a preParsing hook of each route that may read a body (GET and HEAD routes read none: they pay
 * nothing). A request for no route (404, 405) is answered 100 at once, as Node did: Fastify's route for it
 * has no such hook, and reads a JSON body before answering.
 */
export function continueWhenBodyWanted(app: FastifyInstance): void {
  app.server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? '/').split('?', 1)[0]!;
    if (request.method !== undefined && app.findRoute({ method: request.method, url: path }) !== null) awaiting.add(request);
    else response.writeContinue();
    app.server.emit('request', request, response);
  });
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.every((method) => method === 'GET' || method === 'HEAD')) return;
    const before = route.preParsing === undefined ? [] : Array.isArray(route.preParsing) ? route.preParsing : [route.preParsing];
    route.preParsing = [...before, continueIfWanted];
  });
}
