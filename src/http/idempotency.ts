import { Type } from '@sinclair/typebox';
import { HttpError } from './errors.js';

/**
 * Idempotency-Key on every POST (docs/idempotency.md), as the API declares it: the header (its schema,
 * quoted or bare), the Idempotent-Replayed answer header, the 409 and the 422 with their words, and what
 * metrics are told. What a keyed request does is http/writes.ts's; what the store keeps, store/idempotency.ts's.
 */

/** The draft's sf-string (`"…"`, with `\"` and `\\`) or Stripe's bare form; 1 to 255 printable ASCII characters either way. */
const KEY_PATTERN = '^(?:"(?:[\\x20\\x21\\x23-\\x5B\\x5D-\\x7E]|\\\\[\\\\"]){1,255}"|[\\x21\\x23-\\x7E][\\x20-\\x7E]{0,254})$';

/** The header as every POST's headers schema declares it: validated (400 naming it), documented, typed. */
export const IdempotencyKeyHeaders = {
  'idempotency-key': Type.Optional(
    Type.String({
      pattern: KEY_PATTERN,
      patternMeaning: 'must be 1 to 255 printable ASCII characters, bare (`k-123`) or as a quoted string (`"k-123"`)',
      description:
        'A key of your own (a UUID, say) that makes a retry of this request safe: the first request with it runs, and a later one with the same key and the same request gets its answer again (`Idempotent-Replayed: true`) without doing anything again, for `IDEMPOTENCY_KEY_TTL` (24 h). The same key with another request: 422; while the first still runs: 409. Bare (`k-123`) or quoted (`"k-123"`), 1 to 255 printable ASCII characters; keys are per token.',
    }),
  ),
};

/** The 409 of a key whose first request still runs (in this process), and the 422 of a key used for another request. */
export function stillRunning(key: string): HttpError {
  return new HttpError(
    'idempotency_key_in_use',
    `a request with Idempotency-Key ${JSON.stringify(key)} is still running: retry once it has been answered`,
  );
}
export function usedForAnother(key: string): HttpError {
  return new HttpError(
    'idempotency_key_reused',
    `Idempotency-Key ${JSON.stringify(key)} was used for another request (another method, path, query, If-Match, If-None-Match, Prefer or body): send a new key with a new request`,
  );
}

/** The key a valid header holds: a quoted string unquoted, a bare one as it is. */
export function keyOf(header: string): string {
  return header.startsWith('"') ? header.slice(1, -1).replace(/\\(["\\])/g, '$1') : header;
}

/** The answer header of a replay, as the OpenAPI document shows it on every answer of a keyed operation (openapi/headers.ts). */
export const REPLAYED_HEADER = {
  'Idempotent-Replayed': {
    description:
      '`true` on the answer to a request made before with this Idempotency-Key, sent again: nothing was done again (any status may come so)',
    schema: { type: 'string' },
  },
};

/** The key the OpenAPI document's examples name. */
const EXAMPLE_KEY = '5f0c3a1e-8d5b-4f7e-9a61-2b7c0d9e4f13';

/** The statuses every keyed POST may answer besides its own, for its response schema, and their examples. */
export const KEY_STATUSES = [409, 422] as const;
export const KEY_EXAMPLES = { running: stillRunning(EXAMPLE_KEY), reused: usedForAnother(EXAMPLE_KEY) };

/** Told of what keys did (metrics). */
export interface IdempotencyObserver {
  replayed(): void;
  conflict(reason: 'running' | 'another-request'): void;
}
