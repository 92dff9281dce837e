import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Fastify answers a URL its router cannot read (not validly percent-encoded, a path parameter past the
 * longest) through the `frameworkErrors` option (http/transport.ts), outside every hook: no onRequest, no
 * onResponse. What the app does for every answer in those hooks (its access line, its metrics, its span) is
 * told here too, once that answer has been sent, so that no request goes unlogged. Nothing of this runs on
 * the path of any other request.
 */

type Listener = (request: FastifyRequest, reply: FastifyReply) => void;

/** By the app's HTTP server (one per app; its encapsulated instances share it). */
const listeners = new WeakMap<object, Listener[]>();

/** `listener` is told of each answer of `app` that Fastify's frameworkErrors wrote, once it was sent. */
export function onFrameworkAnswer(app: FastifyInstance, listener: Listener): void {
  const list = listeners.get(app.server);
  if (list === undefined) listeners.set(app.server, [listener]);
  else list.push(listener);
}

/** Called by frameworkErrors before it answers: the listeners run once the answer has been sent. */
export function answeringOutsideHooks(request: FastifyRequest, reply: FastifyReply): void {
  const list = listeners.get(request.server.server);
  if (list === undefined) return;
  reply.raw.once('finish', () => {
    for (const listener of list) listener(request, reply);
  });
}
