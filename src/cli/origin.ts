/**
 * fetch for the CLI's calls through --url (api.ts), kept within the service's origin: a redirect elsewhere
 * is said and refused, never followed with the request and its body.
 */

/** A redirect the CLI does not follow (fetchWithinOrigin): said, and the command fails. */
export class RedirectRefused extends Error {}

/** Redirects followed at most, within the service's origin. */
const REDIRECTS_MAX = 5;

/**
 * fetch, but following a redirect only where nothing can go astray: within the service's origin, and only
 * for a read (GET), at most REDIRECTS_MAX times. fetch itself would follow a 307 to any host and send the
 * request there again, body and all (it drops the token, not the body): a write would be done, or seem done,
 * somewhere else. Any other redirect is refused with a RedirectRefused saying where it pointed.
 */
export async function fetchWithinOrigin(request: Request): Promise<Response> {
  let current = request;
  for (let hops = 0; ; hops++) {
    const response = await fetch(current, { redirect: 'manual' });
    const location = response.headers.get('location');
    if (response.status < 300 || response.status > 399 || location === null) return response;
    await response.body?.cancel();
    const from = new URL(current.url);
    const to = new URL(location, from);
    const answered = `${from.origin} answered ${current.method} ${from.pathname} with ${response.status}, a redirect`;
    if (to.origin !== from.origin) {
      throw new RedirectRefused(
        `${answered} to another origin (${to.origin}): not followed, so neither the request nor the token went there; if the service has moved, give its address with --url`,
      );
    }
    if (current.method !== 'GET') {
      throw new RedirectRefused(
        `${answered} to ${to.pathname}: not followed (only reads are, lest a write be done twice or lose its body); if the service is there, give that address with --url`,
      );
    }
    if (hops >= REDIRECTS_MAX) throw new RedirectRefused(`${answered}, the ${hops + 1}th in a row: not followed further`);
    current = new Request(to, { method: 'GET', headers: current.headers, signal: current.signal, redirect: 'manual' });
  }
}
