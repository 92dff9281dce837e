import { HttpError } from './errors.js';

/**
 * A request target that is not one, refused 400 `invalid_request` like a path that does not decode (the
 * router's, http/transport.ts), rather than read as something the client did not write:
 * - a fragment (`/plants/1#x`): RFC 9112 3.2's request target has none (a client strips it), and the
 *   router would take `#x` for a query string;
 * - a query string that is not validly percent-encoded (`?q=%zz`, `?q=%`, bytes that are not UTF-8): the
 *   query parser keeps such text as it is, so `q=%zz` searched for the three characters `%zz`.
 * Every request pays two scans of its URL for `#` and `?`; only a query holding a `%` is decoded.
 */
export function targetProblem(url: string): HttpError | undefined {
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
