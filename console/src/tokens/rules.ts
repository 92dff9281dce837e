import type { Scope } from '../api.js';

/**
 * What the Tokens view decides without the DOM: the scopes a form may offer, the note on the tokens the list
 * does not hold, and the Idempotency-Key of a form's submissions. Pure, so that the unit tests run them in
 * Node (test/console/token-rules.test.ts).
 */

/**
 * Every scope, in the service's order, with what it allows, in words. A Record over the type the service's
 * OpenAPI document gives: a scope it adds is a compile error here until it is described.
 */
export const SCOPE_WORDS: Readonly<Record<Scope, string>> = {
  'plants:read': 'list, read and export plants',
  'plants:write': 'create, change, delete and import plants',
  'webhooks:manage': 'add, change and delete webhook endpoints',
  'events:read': 'follow the change feed',
  'tokens:manage': 'list, make and revoke tokens',
};

const ORDER = Object.keys(SCOPE_WORDS) as Scope[];

/**
 * The scopes a new token may be given by a token holding `held` (the service refuses any other: 403), in the
 * service's order; and the others, withheld. (The console is served by the service it was built with, so
 * it knows every scope the service does.)
 */
export function grantable(held: readonly Scope[]): { offered: Scope[]; withheld: Scope[] } {
  // tokens:manage alone makes nothing (the service answers 403): a token holding no other scope offers none.
  if (held.every((scope) => scope === 'tokens:manage')) return { offered: [], withheld: [...ORDER] };
  return { offered: ORDER.filter((scope) => held.includes(scope)), withheld: ORDER.filter((scope) => !held.includes(scope)) };
}

const SOURCE_WORDS: Record<string, string> = { static: 'Static tokens', jwt: 'JWTs' };

/**
 * The note on the header Unlisted-Token-Sources of GET /tokens (`static, jwt`): which tokens the service
 * also accepts that it does not list, and so that cannot be managed here. '' when the header is absent.
 */
export function unlistedNote(header: string | null): string {
  const sources = [
    ...new Set(
      (header ?? '')
        .split(',')
        .map((source) => source.trim())
        .filter((source) => source !== ''),
    ),
  ];
  if (sources.length === 0) return '';
  const names = sources.map((source) => SOURCE_WORDS[source.toLowerCase()] ?? `Tokens of the kind "${source}"`);
  const listed = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]!}`;
  return `${listed} are also accepted; they are not managed here.`;
}

/** A fresh random UUID (version 4), from getRandomValues: randomUUID exists only on https and loopback pages. */
export function newKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * How an attempt ended: `answered` with a status, or with no answer at all (the service or the network
 * failed on the way: whether it was done is unknown).
 */
export type Attempt = { answered: true; status: number; code?: string | undefined } | { answered: false };

/**
 * The Idempotency-Key of one form's submissions (POST /tokens), so that neither a double click nor a retry
 * makes two tokens. A submission gets a new key; a retry of it (the same body, sent again after an attempt
 * whose outcome is unknown) gets the same key, so that the service answers it with what the first attempt
 * did, the same token and secret, and makes none again. The outcome is unknown after no answer, after a 5xx,
 * and after the 409 of a key still in use (`idempotency_key_in_use`: the first attempt may still be running,
 * and a retry once it has finished gets its answer). Any other answer is final (a 409 of a name taken too): the next submission, even of the
 * same body (a name taken meanwhile freed), is a new one, with a new key, and is done anew.
 */
export class Submissions {
  private pending: { body: string; key: string; retried: boolean } | undefined;

  constructor(private readonly makeKey: () => string = newKey) {}

  /** The key to send `body` with (the JSON of what is sent). */
  keyFor(body: string): string {
    if (this.pending?.body === body) {
      this.pending.retried = true;
      return this.pending.key;
    }
    this.pending = { body, key: this.makeKey(), retried: false };
    return this.pending.key;
  }

  /** How the last attempt (the last keyFor) ended. */
  ended(attempt: Attempt): void {
    if (this.pending === undefined) return;
    const unknown = !attempt.answered || attempt.status >= 500 || attempt.code === 'idempotency_key_in_use';
    if (!unknown) this.pending = undefined;
  }
}
