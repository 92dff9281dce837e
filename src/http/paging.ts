import type { FastifyRequest } from 'fastify';
import type { NextPage } from './cursors.js';

/**
 * The Link header of the next page (RFC 8288): the request's own path and query parameters (filters,
 * order and limit, repeated ones kept), with where the next page starts (http/cursors.ts's nextPage: a
 * `cursor`, or under PAGE_LINKS=1.0 the form of the release before) in place of any `cursor` or `after`
 * the request had, less the parameters named in `drop` (a token). Relative, so that it is right behind any proxy.
 */
export function nextPageLink(request: FastifyRequest, [name, value]: NextPage, drop: readonly string[] = []): string {
  const at = request.url.indexOf('?');
  const path = at === -1 ? request.url : request.url.slice(0, at);
  const params = new URLSearchParams(at === -1 ? '' : request.url.slice(at + 1));
  for (const dropped of drop) params.delete(dropped);
  params.delete('after');
  params.delete('cursor');
  params.set(name, value);
  return `<${path}?${params.toString()}>; rel="next"`;
}

/** The Link header of a list's 200, for the OpenAPI document. */
export function nextLinkHeader(items: string): { Link: { description: string; schema: { type: 'string' } } } {
  return {
    Link: {
      description: `\`<…>; rel="next"\` while more ${items} remain: this request with the cursor of the next page`,
      schema: { type: 'string' },
    },
  };
}
