import type { Scope } from '../api.js';

/**
 * What the Tokens view decides without the DOM: the scopes a form may offer, the note on the tokens the list
 * does not hold (the Idempotency-Key of a form's submissions is submissions.ts's). Pure, so that the unit tests run them in
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
