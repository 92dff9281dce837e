import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { onFrameworkAnswer } from '../http/framework-answers.js';
import type { Metrics, RequestLabel } from './registry.js';

/** The route label of a request no route matched (404, 405): one label, never the raw URL. */
export const UNMATCHED = 'unmatched';
/** Methods labelled as they are; any other (PROPFIND, …) is `other`, so that clients cannot mint series. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/**
 * Distinct (method, route, status) series at most. Routes and statuses are few (a few hundred series at
 * the very most), so this is never reached; should it be, further new series are counted as `other`
 * rather than grow memory and the scrape.
 */
const MAX_SERIES = 1000;

/** The label objects of one (method, route, status): made once, then reused by every such request (no allocation). */
interface Series {
  count: Record<RequestLabel, string>;
  duration: Record<'method' | 'route', string>;
}

const OVERFLOW: Series = { count: { method: 'other', route: 'other', status: 'other' }, duration: { method: 'other', route: 'other' } };

/**
 * Counts every answer and observes its duration, in one onResponse hook, by method, route template
 * (`/plants/:id`) and status. Installed only when metrics are on. Per request: three Map look-ups (keyed
 * by the route template and the method, the same string objects every time, whose hashes V8 has cached,
 * and the status) and the two prom-client calls: a small share of a request's CPU (measured in
 * bench/RESULTS.md and docs/metrics-and-tracing.md).
 */
export function installRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  const byRoute = new Map<string, Map<string, Map<number, Series>>>();
  let made = 0;

  const seriesOf = (method: string, route: string, status: number): Series => {
    let byMethod = byRoute.get(route);
    if (byMethod === undefined) byRoute.set(route, (byMethod = new Map<string, Map<number, Series>>()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map<number, Series>()));
    let series = byStatus.get(status);
    if (series === undefined) {
      if (made >= MAX_SERIES) return OVERFLOW;
      made++;
      const duration = { method: METHODS.has(method) ? method : 'other', route };
      byStatus.set(status, (series = { count: { ...duration, status: String(status) }, duration }));
    }
    return series;
  };

  const count = (request: FastifyRequest, reply: FastifyReply) => {
    const series = seriesOf(request.method, request.routeOptions.url ?? UNMATCHED, reply.statusCode);
    metrics.requests.inc(series.count);
    metrics.requestSeconds.observe(series.duration, reply.elapsedTime / 1000);
  };
  app.addHook('onResponse', (request, reply, done) => {
    count(request, reply);
    done();
  });
  // A URL the router cannot read: answered outside the hooks, counted all the same (as `unmatched`).
  onFrameworkAnswer(app, count);
}
