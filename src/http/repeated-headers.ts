import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import { HttpError } from './errors.js';

/**
 * Headers a request must send at most once. Node joins a header it does not know, sent twice, into one
 * value ("a, b"), which the schema would take for one value: an `Idempotency-Key` sent twice would be one
 * key "a, b", neither of the client's. Where a route's headers schema declares such a header, a hook of
 * that route (so after authentication, before the body is read) refuses it sent more than once, 400
 * naming it; it looks at the raw headers only when the value has a comma.
 */
const ONCE = ['idempotency-key'];

/** The 400's message (the validation messages' form: the request part, then the header). */
function sentMoreThanOnce(name: string, times: number): string {
  return `headers.${name} must be sent once, not ${times} times: send one value`;
}

/** How many times the request's raw headers carry `name` (lower case). */
function timesSent(rawHeaders: readonly string[], name: string): number {
  let times = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name) times++;
  return times;
}

export function refuseRepeatedHeaders(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const declared = (route.schema?.headers as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
    const once = ONCE.filter((name) => name in declared);
    if (once.length === 0) return;
    const refuse: onRequestHookHandler = (request, _reply, done) => {
      for (const name of once) {
        const value = request.headers[name];
        if (value === undefined || !value.includes(',')) continue;
        const times = Array.isArray(value) ? value.length : timesSent(request.raw.rawHeaders, name);
        if (times > 1) return done(new HttpError(400, sentMoreThanOnce(name, times)));
      }
      done();
    };
    route.onRequest = [...[route.onRequest ?? []].flat(), refuse];
  });
}
