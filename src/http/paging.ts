import type { FastifyRequest } from 'fastify';

/**
 * The Link header of the next page (RFC 8288): the request's own path and query parameters with
 * `after` moved on to the last item of this page, less those named in `drop` (a token). Relative, so
 * that it is right behind any proxy.
 */
export function nextPageLink(request: FastifyRequest, after: string, drop: readonly string[] = []): string {
  const at = request.url.indexOf('?');
  const path = at === -1 ? request.url : request.url.slice(0, at);
  const params = new URLSearchParams(at === -1 ? '' : request.url.slice(at + 1));
  for (const name of drop) params.delete(name);
  params.set('after', after);
  return `<${path}?${params.toString()}>; rel="next"`;
}
