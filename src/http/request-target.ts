import { HttpError } from './errors.js';
import { sentMoreThanOnce, timesSent } from './repeated-headers.js';

/**
 * A request target that is not one, refused 400 `invalid_request` like a path that does not decode (the
 * router's, http/transport.ts), rather than read as something the client did not write:
 * - a target that is neither a path nor an absolute URL (which originForm made one): the router took
 *   `*plants/6` for `/plants/6`, so that a proxy allowing or refusing by path prefix saw another resource
 *   than this service served (RFC 9112 3.2: `*` alone, and only for OPTIONS, is the fourth form);
 * - a fragment (`/plants/1#x`): RFC 9112 3.2's request target has none (a client strips it), and the
 *   router would take `#x` for a query string;
 * - a query string that is not validly percent-encoded (`?q=%zz`, `?q=%`, bytes that are not UTF-8): the
 *   query parser keeps such text as it is, so `q=%zz` searched for the three characters `%zz`.
 * Every request pays two scans of its URL for `#` and `?`; only a query holding a `%` is decoded.
 */
export function targetProblem(url: string, method = 'GET'): HttpError | undefined {
  if (url.charCodeAt(0) !== 0x2f && !(url === '*' && method === 'OPTIONS')) {
    return new HttpError(
      'invalid_request',
      `the request target ${JSON.stringify(url.slice(0, 100))} is not a path: send one that starts with / (or an absolute http(s) URL)`,
    );
  }
  if (url.includes('#')) {
    return new HttpError('invalid_request', 'the URL holds a fragment (#…), which a request target never does: send the URL without it');
  }
  const start = url.indexOf('?');
  if (start === -1 || !url.includes('%', start)) return undefined;
  for (const pair of url.slice(start + 1).split('&')) {
    if (decodes(pair)) continue;
    const name = pair.slice(0, pair.includes('=') ? pair.indexOf('=') : undefined);
    const field = decodes(name) ? `querystring.${decodeURIComponent(name.replaceAll('+', ' '))}` : 'querystring';
    return new HttpError(
      'invalid_request',
      `${field} is not validly percent-encoded: a % begins two hexadecimal digits, and the bytes so written must be UTF-8`,
      { field },
    );
  }
  return undefined;
}

function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/** What Node takes for a 100-continue expectation (its own test of the Expect header). */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;

/**
 * The 417 of an expectation this service does not meet (any Expect but 100-continue), refused in the
 * request pipeline like any other refusal (with its request id, as problem details when asked): Node hands
 * such a request on to it (http/transport.ts) instead of answering it alone.
 */
export function expectationProblem(expect: string | undefined): HttpError | undefined {
  if (expect === undefined || CONTINUE.test(expect)) return undefined;
  return new HttpError('expectation_unsupported', `Expect: ${expect.slice(0, 100)} is not supported (only 100-continue is)`, {
    field: 'headers.expect',
  });
}

/**
 * RFC 9112 3.2: a server MUST answer 400 to an HTTP/1.1 request without Host, and to any request with more
 * than one Host line or a Host that is not `host[:port]`. Node keeps the first Host of several and drops the
 * others without a word, so a proxy that routed by another would disagree with this service about the
 * request's authority. Every request pays one walk of its raw header names (a length compared for most)
 * and one regular expression over its Host.
 */
export function hostProblem(host: string | undefined, httpVersionMinor: number, rawHeaders: readonly string[]): HttpError | undefined {
  if (host === undefined) {
    if (httpVersionMinor !== 1) return undefined;
    return new HttpError('invalid_header', 'the Host header is missing (HTTP/1.1 requires it)', { field: 'headers.host' });
  }
  const times = timesSent(rawHeaders, 'host');
  if (times > 1) return new HttpError('header_repeated', sentMoreThanOnce('host', times), { field: 'headers.host' });
  if (HOST.test(host)) return undefined;
  return new HttpError(
    'invalid_header',
    `headers.host must be a host name or address and an optional port (host[:port]), not ${JSON.stringify(host.slice(0, 100))}`,
    {
      field: 'headers.host',
    },
  );
}

/** RFC 3986's host (an IP literal in brackets, or a reg-name: IPv4 addresses are of its form) and port; empty is allowed (RFC 9112 3.2). */
const HOST = /^(?:\[[\w.:~!$&'()*+,;=%-]+\]|[\w.~!$&'()*+,;=%-]*)(?::\d*)?$/;

/**
 * RFC 9112 6.1: a request whose transfer codings hold any but `chunked` (`gzip, chunked`) is answered 501, as
 * the RFC advises: Node's parser takes such a body chunked and hands its bytes on still coded, which the
 * JSON parser would refuse as not JSON, or worse, read. (Node refuses by itself a Transfer-Encoding that
 * does not end in chunked.)
 */
export function transferProblem(codings: string | undefined): HttpError | undefined {
  if (codings === undefined || codings === 'chunked' || CHUNKED_ALONE.test(codings)) return undefined;
  return new HttpError(
    'transfer_coding_unsupported',
    `Transfer-Encoding: ${codings.slice(0, 100)} is not supported: send the body chunked alone, or with a Content-Length (a Content-Encoding is not taken either)`,
    { field: 'headers.transfer-encoding' },
  );
}

const CHUNKED_ALONE = /^[ \t]*chunked[ \t]*$/i;

/** An absolute-form target's scheme and authority (RFC 9112 3.2.2), as a client sends to a proxy. */
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

/**
 * The origin form of an absolute-form target (`http://host/plants?x` is `/plants?x`), which a server must
 * accept (RFC 9112 3.2.2): answered as the same request in origin form, so that what is built from the
 * target (a next page's Link, the Idempotency-Key's fingerprint, the log) never names the host the client
 * wrote. Any other target is left as it is, for targetProblem to refuse.
 */
export function originForm(url: string): string {
  const absolute = ABSOLUTE_FORM.exec(url);
  if (absolute === null) return url;
  const rest = url.slice(absolute[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}
