import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The Prefer request header (RFC 7240): preferences such as `count=exact` or `handling=strict`, comma
 * separated (several Prefer lines arrive joined by commas), each optionally followed by `;` parameters,
 * which no preference of this service takes. Names are matched without regard to case, values as
 * lower case; a value may be quoted. Of a preference given twice the first counts (§2). A server may
 * leave any preference aside; it says which it applied in Preference-Applied.
 */

const NONE: ReadonlyMap<string, string> = new Map();

/** Each preference's name (lower case) and value (lower case, unquoted; '' when it has none). */
export function preferences(given: string | readonly string[] | undefined): ReadonlyMap<string, string> {
  if (given === undefined || given === '') return NONE;
  const header = typeof given === 'string' ? given : given.join(',');
  const found = new Map<string, string>();
  for (const part of header.split(',')) {
    const [nameValue = ''] = part.split(';', 1);
    const equals = nameValue.indexOf('=');
    const name = (equals === -1 ? nameValue : nameValue.slice(0, equals)).trim().toLowerCase();
    if (name === '' || found.has(name)) continue;
    const value = equals === -1 ? '' : nameValue.slice(equals + 1).trim();
    found.set(name, (value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value).toLowerCase());
  }
  return found;
}

/** Prefer: count=exact, as PostgREST reads it. */
export function prefersExactCount(prefer: string | readonly string[] | undefined): boolean {
  return preferences(prefer).get('count') === 'exact';
}

/** What a write does with a body field it does not know: refuse the request, or ignore the field and say so. */
export type Handling = 'strict' | 'lenient';

/** Prefer: handling=strict or handling=lenient (RFC 7240 §4.4), when the request says; else undefined. */
export function preferredHandling(prefer: string | readonly string[] | undefined): Handling | undefined {
  const value = preferences(prefer).get('handling');
  return value === 'strict' || value === 'lenient' ? value : undefined;
}

/** Says a preference was applied, beside those said already (Preference-Applied is a list). */
export function preferenceApplied(reply: FastifyReply, value: string): void {
  const before = reply.getHeader('preference-applied');
  reply.header('preference-applied', before === undefined || before === '' ? value : `${String(before)}, ${value}`);
}

/**
 * An error answer of a write that asked for a handling says it applied it, whatever the status (docs/api.md):
 * the refusals that come before the body is read (401, 413, 415, a body that is not JSON) never reach the
 * step that applies it. Asked in the onSend step of error answers to requests with Prefer only.
 */
export function acknowledgeHandling(request: FastifyRequest, reply: FastifyReply): void {
  const schema = request.routeOptions.schema;
  if (schema?.body === undefined && (schema as { requestBodyDoc?: unknown } | undefined)?.requestBodyDoc === undefined) return;
  const asked = preferredHandling(request.headers.prefer);
  if (asked === undefined || String(reply.getHeader('preference-applied') ?? '').includes('handling=')) return;
  preferenceApplied(reply, `handling=${asked}`);
}
