import { isUtf8 } from 'node:buffer';
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import { parseJson } from '../json/exact.js';
import { firstRoundedNumber, ROUNDED_CANDIDATE } from '../json/rounded-numbers.js';
import { HttpError } from './errors.js';
import { fingerprintBody } from './fingerprint.js';
import { int64Body } from './int64-preference.js';
import { checkJsonDepth, JsonDepthError } from './json-depth.js';
import { JSON_MEDIA_TYPES } from './media-types.js';

/** A `\uD800`–`\uDFFF` escape: the only way a lone surrogate can enter text that is valid UTF-8. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A request body that is not what RFC 8259 calls JSON text: not UTF-8, or a string no UTF-8 can hold. */
class JsonBodyError extends Error {}

/**
 * A number that is not an integer where every number of the API is one, though JSON.parse would round it to
 * one (json/rounded-numbers.ts): refused as the schema refuses `1.5`, naming the member it is the value of.
 */
class RoundedNumberError extends Error {
  constructor(
    readonly number: string,
    readonly key: string | undefined,
    what: string,
  ) {
    const field = key === undefined ? what : `${what === 'the body' ? 'body.' : ''}${key}`;
    super(`${field} must be an integer: ${number.slice(0, 40)} is not one, though a double would round it to ${Number(number)}`);
    this.field = key === undefined ? undefined : `body.${key}`;
  }
  readonly field: string | undefined;
}

/** True when some string (value or key) of a parsed document holds a lone surrogate. Iterative: documents may nest deeply. */
function hasLoneSurrogate(root: unknown): boolean {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return true;
    } else if (Array.isArray(value)) {
      for (const item of value) pending.push(item);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) pending.push(key, item);
    }
  }
  return false;
}

/**
 * A request body as JSON. It must be UTF-8: a byte sequence that is not would otherwise be stored as
 * U+FFFD, a change the client never sent. Nor may a string escape a lone surrogate (`"\ud800"`):
 * stored as UTF-8 it would come back as something else than what the answer acknowledged.
 */
export function parseJsonBody(bytes: Buffer): unknown {
  if (!isUtf8(bytes)) throw new JsonBodyError('body is not valid UTF-8');
  return parseJsonText(bytes.toString('utf8'), 'the body');
}

/**
 * JSON text (already decoded) with exact int64 and no lone surrogate: a request body, or one row of an
 * import. A syntax error is a SyntaxError; nesting past JSON_MAX_DEPTH a JsonDepthError (on the plain
 * and the exact int64 path alike); a lone surrogate a JsonBodyError naming `what`.
 */
export function parseJsonText(text: string, what = 'the row'): unknown {
  checkJsonDepth(text);
  const value = parseJson(text);
  if (ROUNDED_CANDIDATE.test(text)) {
    const rounded = firstRoundedNumber(text);
    if (rounded !== undefined) throw new RoundedNumberError(rounded.number, rounded.key, what);
  }
  if (SURROGATE_ESCAPE.test(text) && hasLoneSurrogate(value)) {
    throw new JsonBodyError(`a string in ${what} holds an unpaired UTF-16 surrogate (\\ud800-\\udfff), which is not Unicode text`);
  }
  return value;
}

/**
 * A request that sends nothing to an operation that takes no body (a DELETE, POST …/rotate-secret): it may
 * still say a Content-Type, as many HTTP clients do on every request, and Fastify then hands it to a
 * parser. It is served as the request without a body that it is, never refused for a body it did not send.
 */
function nothingForNoBody(request: FastifyRequest, length: number | undefined): boolean {
  return length === 0 && request.routeOptions.schema?.body === undefined;
}

/** A request's body length as its headers say it before it is read: 0 for none, undefined when it has one or is chunked. */
function declaredLength(headers: FastifyRequest['headers']): number | undefined {
  if (headers['transfer-encoding'] !== undefined) return undefined;
  const length = headers['content-length'];
  return length === undefined || length === '0' ? 0 : undefined;
}

/**
 * The only body parser: JSON (and merge patches) with exact int64, UTF-8 and surrogate checks. Any other
 * media type is refused 415, as Fastify refuses a type no parser takes, unless the request has no body and
 * its operation takes none (nothingForNoBody).
 */
export function installJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.decorateRequest('fingerprint', null);
  app.addContentTypeParser('*', (request, payload, done) => {
    if (request.is404 || nothingForNoBody(request, declaredLength(request.headers))) return done(null, undefined);
    if (request.routeOptions.schema?.body !== undefined || request.headers['transfer-encoding'] === undefined) {
      return done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(), undefined);
    }
    // A chunked request to an operation that takes no body: served when its chunks hold nothing (`0`, as
    // clients frame a body of unknown length), refused 415 at its first byte otherwise.
    let settled = false;
    const settle = (error: Error | null) => {
      if (settled) return;
      settled = true;
      done(error, undefined);
    };
    payload.on('data', (chunk: Buffer) => {
      if (chunk.length > 0) settle(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE());
    });
    payload.once('end', () => settle(null));
    payload.once('error', (error: Error) => settle(error));
  });
  app.addContentTypeParser(JSON_MEDIA_TYPES, { parseAs: 'buffer' }, (request, body, done) => {
    if (nothingForNoBody(request, (body as Buffer).length)) return done(null, undefined);
    // A keyed POST's body, as sent, is part of its fingerprint (http/fingerprint.ts), carried by the request.
    fingerprintBody(request, body as Buffer);
    try {
      // Prefer: int64=string: the body's int64 members may be strings too (http/int64-preference.ts).
      done(null, int64Body(request, parseJsonBody(body as Buffer)));
    } catch (error) {
      if (error instanceof RoundedNumberError) return done(new HttpError('validation_failed', error.message, { field: error.field }), undefined);
      const message =
        error instanceof JsonBodyError
          ? error.message
          : error instanceof JsonDepthError
            ? `body is ${error.message}`
            : `body is not valid JSON: ${(error as Error).message}`;
      done(new HttpError('invalid_json', message), undefined);
    }
  });
}
