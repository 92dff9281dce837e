import type { FastifyRequest } from 'fastify';

/**
 * The Link header of the next page (RFC 8288): the request's own path and query parameters (filters,
 * order and limit, repeated ones kept), with `param` set to where the next page starts: `after`, the
 * last item's id, or an opaque `cursor` (GET /plants), which then replaces any `after` the request had;
 * less the parameters named in `drop` (a token). Relative, so that it is right behind any proxy.
 */
export function nextPageLink(request: FastifyRequest, value: string, param: 'after' | 'cursor' = 'after', drop: readonly string[] = []): string {
  const at = request.url.indexOf('?');
  const path = at === -1 ? request.url : request.url.slice(0, at);
  const params = new URLSearchParams(at === -1 ? '' : request.url.slice(at + 1));
  for (const name of drop) params.delete(name);
  if (param === 'cursor') params.delete('after');
  params.set(param, value);
  return `<${path}?${params.toString()}>; rel="next"`;
}
