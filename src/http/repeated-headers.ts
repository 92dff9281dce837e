import type { FastifyRequest } from 'fastify';
import { HttpError } from './errors.js';

/**
 * Headers a request must send at most once. Node joins a header it does not know, sent twice, into one
 * value ("a, b"), which the schema would take for one value: an `Idempotency-Key` sent twice would be one
 * key "a, b", neither of the client's (http/writes.ts refuses it before anything is done). Node keeps
 * only the first `Authorization` and drops the others without a word, so that a proxy or another server
 * reading the last one would judge another token than this service: it is refused too (http/auth.ts).
 */

/** The 400's message (the validation messages' form: the request part, then the header). */
export function sentMoreThanOnce(name: string, times: number): string {
  return `headers.${name} must be sent once, not ${times} times: send one value`;
}

/** How many times the request's raw headers carry `name` (lower case): lengths compared before letters, so that most names cost a comparison. */
export function timesSent(rawHeaders: readonly string[], name: string): number {
  let times = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const sent = rawHeaders[i]!;
    if (sent.length === name.length && (sent === name || sent.toLowerCase() === name)) times++;
  }
  return times;
}

/**
 * Refuses a header sent more than once where it must come once: 400 naming it. Looked at only where the
 * header is used, and only when its value holds a comma (a single value rarely does), so that no request
 * pays for it otherwise.
 */
export function refuseRepeated(request: FastifyRequest, name: string): void {
  const value = request.headers[name];
  if (value === undefined || !value.includes(',')) return;
  const times = Array.isArray(value) ? value.length : timesSent(request.raw.rawHeaders, name);
  if (times > 1) throw new HttpError('header_repeated', sentMoreThanOnce(name, times), { field: `headers.${name}` });
}

/**
 * The 400 of a request that sent Authorization more than once, else undefined. Asked only of a request that
 * sent the header (an authenticated route's): its raw header names are walked once, a length compared for
 * most, so that a request with one Authorization pays a loop over its few header names.
 */
export function repeatedAuthorization(rawHeaders: readonly string[]): HttpError | undefined {
  const times = timesSent(rawHeaders, 'authorization');
  return times > 1 ? new HttpError('header_repeated', sentMoreThanOnce('authorization', times), { field: 'headers.authorization' }) : undefined;
}
