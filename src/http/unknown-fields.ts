import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import { HttpError } from './errors.js';
import { preferredHandling, type Handling } from './preferences.js';

/**
 * Body fields a write does not know. JSON Schema lets an object carry members its schema does not name,
 * and the specification's rule 1 answers a valid NewPlant 200, so by default such a field is ignored,
 * and said: one `Warning: 299 - "unknown field \"tga\" was ignored"` per field (as Kubernetes answers
 * unknown fields), so that a typo is never lost in silence. A request sent with `Prefer: handling=strict`
 * (RFC 7240) is refused instead, 400 naming every unknown field, nothing written, and answered with
 * `Preference-Applied: handling=strict`; UNKNOWN_FIELDS=refuse makes refusing the default, which
 * `Prefer: handling=lenient` sets aside for one request.
 *
 * Every route whose body is a JSON object of named fields gets the check (installUnknownFields), so no
 * write can forget it; a streamed body (an import) checks its rows itself (plants/import.ts).
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * For a route whose body is an object of named fields (installUnknownFields): a strict request's unknown
     * fields as a problem, for the error handler to tell beside the body's other problems; undefined for a
     * lenient request or none unknown. Says which handling was applied, when the request asked for one.
     */
    unknownFieldsProblem?: (request: FastifyRequest, reply: FastifyReply) => string | undefined;
  }
}

/** Warnings for this many fields at most; the rest are counted in one more. */
const WARNINGS_MAX = 20;
/** A field's name is shown up to this many characters. */
const NAME_SHOWN = 60;

/** The Prefer header of every write that takes a body, as its headers schema declares it (validated, documented, typed). */
export const PreferHandlingHeaders = {
  prefer: Type.Optional(
    Type.String({
      description:
        '`handling=strict`: a body field this operation does not know is refused (400 naming it, nothing written) instead of ignored with a `Warning` header; `handling=lenient`: ignored, where the service refuses by default (UNKNOWN_FIELDS=refuse). Answered with `Preference-Applied`.',
    }),
  ),
};

/** The Warning and Preference-Applied answer headers of a write that takes a body, as the OpenAPI document shows them. */
export const WARNING_HEADERS = {
  Warning: {
    description:
      'One `299 - "…"` per thing the request should know although it succeeded: `unknown field "tga" was ignored` (a body field this operation does not know; send `Prefer: handling=strict` to have it refused instead)',
    schema: { type: 'string' },
  },
  'Preference-Applied': { description: '`handling=strict` or `handling=lenient`, when the request asked for it', schema: { type: 'string' } },
};

/** A name taken from the request as it appears in a message: JSON, shortened. */
function shown(name: string): string {
  return JSON.stringify(name.length > NAME_SHOWN ? `${name.slice(0, NAME_SHOWN)}…` : name);
}

/**
 * A Warning header's value (RFC 9111 §5.5, 299 Miscellaneous Persistent Warning): the text as a quoted
 * string. Header values must be visible ASCII, so anything else in the text (a field's name may hold any
 * character) is written as a JSON escape.
 */
export function warning(text: string): string {
  const ascii = text.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `299 - "${ascii.replace(/[\\"]/g, '\\$&')}"`;
}

/** Adds a Warning to the answer, after those it has already. */
export function addWarning(reply: FastifyReply, text: string): void {
  const earlier = reply.getHeader('warning');
  const value = warning(text);
  reply.header('warning', earlier === undefined ? value : [...(Array.isArray(earlier) ? earlier : [String(earlier)]), value]);
}

/** The fields of a body its route does not name, in the body's order. */
export function unknownFields(body: unknown, known: ReadonlySet<string>): string[] {
  const unknown: string[] = [];
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return unknown;
  for (const name in body) if (!known.has(name)) unknown.push(name);
  return unknown;
}

/** The words of a refusal naming every unknown field: `body has an unknown field "tga"`, `body has unknown fields "a", "b" and "c"`. */
export function unknownFieldsProblem(where: string, fields: readonly string[]): string {
  const names = fields.slice(0, WARNINGS_MAX).map(shown);
  const more = fields.length - names.length;
  if (more > 0) names.push(`${more} more`);
  return fields.length === 1
    ? `${where} has an unknown field ${names[0]!}`
    : `${where} has unknown fields ${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
}

/** The warnings of ignored fields: one per field, the ones past WARNINGS_MAX counted in one more. `rows`: an import's, by field. */
export function ignoredWarnings(fields: readonly string[], rows?: ReadonlyMap<string, number>): string[] {
  const texts = fields.slice(0, WARNINGS_MAX).map((name) => {
    const times = rows?.get(name);
    return `unknown field ${shown(name)} was ignored${times === undefined ? '' : ` in ${times === 1 ? '1 row' : `${times} rows`}`}`;
  });
  const more = fields.length - WARNINGS_MAX;
  if (more > 0) texts.push(`${more} more unknown ${more === 1 ? 'field was' : 'fields were'} ignored`);
  return texts;
}

/** What this request does with unknown fields: its own Prefer, else the operator's default. */
export function handlingOf(request: FastifyRequest, fallback: Handling): { handling: Handling; asked: boolean } {
  const asked = preferredHandling(request.headers.prefer);
  return { handling: asked ?? fallback, asked: asked !== undefined };
}

/** A strict request's unknown fields as one problem (validation failed: the error handler tells it with the others). */
function strictProblem(request: FastifyRequest, reply: FastifyReply, known: ReadonlySet<string>, fallback: Handling): string | undefined {
  const { handling, asked } = handlingOf(request, fallback);
  if (asked) reply.header('preference-applied', `handling=${handling}`);
  if (handling !== 'strict') return undefined;
  const unknown = unknownFields(request.body, known);
  return unknown.length === 0 ? undefined : unknownFieldsProblem('body', unknown);
}

function checkHook(known: ReadonlySet<string>, fallback: Handling): preHandlerHookHandler {
  return function checkUnknownFields(request, reply, done) {
    const { handling, asked } = handlingOf(request, fallback);
    if (asked) reply.header('preference-applied', `handling=${handling}`);
    const unknown = unknownFields(request.body, known);
    if (unknown.length === 0) return done();
    if (handling === 'strict') return done(new HttpError(400, unknownFieldsProblem('body', unknown)));
    for (const text of ignoredWarnings(unknown)) addWarning(reply, text);
    done();
  };
}

/** The named fields of an object schema that lets other members through; undefined for any other schema. */
function namedFields(schema: unknown): ReadonlySet<string> | undefined {
  const object = schema as { type?: unknown; properties?: Record<string, unknown>; additionalProperties?: unknown } | undefined;
  if (object?.type !== 'object' || object.properties === undefined || object.additionalProperties === false) return undefined;
  return new Set(Object.keys(object.properties));
}

/**
 * Gives every route whose body is an object of named fields the check, as a preHandler (after validation:
 * a valid body is checked), and notes its fields in its config for the error handler. `fallback`: the
 * operator's default (UNKNOWN_FIELDS).
 */
export function installUnknownFields(app: FastifyInstance, fallback: Handling): void {
  app.addHook('onRoute', (route) => {
    const known = namedFields(route.schema?.body);
    if (known === undefined) return;
    // Documented where the route declares its headers, so that the OpenAPI document cannot leave it out.
    if ((route.schema?.headers as { properties?: Record<string, unknown> } | undefined)?.properties?.prefer === undefined) {
      throw new Error(
        `route ${String(route.method)} ${route.url}: its body may hold unknown fields, so its headers must declare Prefer (PreferHandlingHeaders)`,
      );
    }
    route.config = { ...route.config, unknownFieldsProblem: (request, reply) => strictProblem(request, reply, known, fallback) };
    const hook = checkHook(known, fallback);
    route.preHandler = route.preHandler === undefined ? [hook] : [hook, ...(Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler])];
  });
}
