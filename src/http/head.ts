import type { FastifyInstance, onSendHookHandler } from 'fastify';

/**
 * HEAD answers as their GET's (RFC 9110 §9.3.2: the same status and header fields, without the content).
 * Fastify makes each GET route's HEAD and, last among its onSend hooks, sets `Content-Length: 0` for an
 * answer without a payload. For a 304 that is wrong: the GET's 304 has none, and a 304 may only carry the
 * length its 200 would have had (§8.6, §15.4.5), so it is sent without one. Only HEAD routes carry this
 * hook: a GET pays nothing for it.
 */
const likeItsGet: onSendHookHandler = (_request, reply, payload, done) => {
  if (reply.statusCode === 304) reply.removeHeader('content-length');
  done(null, payload);
};

/** Adds likeItsGet after the onSend hooks of each HEAD route, Fastify's own included. */
export function headAnswersLikeGet(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.includes('HEAD')) return;
    const before = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
    route.onSend = [...before, likeItsGet];
  });
}
