import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import { count, oneEditAway } from '../words.js';
import { HttpError } from './errors.js';
import { preferenceApplied, preferences, preferredHandling, type Handling } from './preferences.js';
import { meantField, optionalFields, quoted, shortName } from './validation-messages.js';

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
    unknownFieldsProblem?: (request: FastifyRequest, reply: FastifyReply) => UnknownFieldsProblem | undefined;
  }
}

/** A strict request's unknown fields as one problem: its words, and the first field (`body.tga`) for the answer's `field`. */
export interface UnknownFieldsProblem {
  message: string;
  field: string;
}

/** Warnings for this many fields at most; the rest are counted in one more. */
const WARNINGS_MAX = 20;
/**
 * An import counts the distinct unknown fields past the first WARNINGS_MAX up to this many (by their names
 * as shown, cut at 60 characters); past it, only the rows they were in: its memory stays the same whatever
 * the number of distinct names (millions, one per row, cost nothing more than twenty).
 */
const OTHERS_COUNTED = 1000;

/** The Prefer header of every write that takes a body, as its headers schema declares it (validated, documented, typed). */
export const PreferHandlingHeaders = {
  prefer: Type.Optional(
    Type.String({
      description:
        '`handling=strict`: a body field this operation does not know is refused (400 naming it, nothing written) instead of ignored with a `Warning` header; `handling=lenient`: ignored, where the service refuses by default (UNKNOWN_FIELDS=refuse). Answered with `Preference-Applied`.',
    }),
  ),
};

/** The Warning answer header of a write that takes a body, as the OpenAPI document shows it on all its answers (openapi/headers.ts). */
export const WARNING_HEADERS = {
  Warning: {
    description:
      'One `299 - "…"` per thing the request should know although it succeeded: `unknown field "tga" was ignored: did you mean "tag"?` (a body field this operation does not know; send `Prefer: handling=strict` to have it refused instead); `Prefer: handling=strickt was not understood (…)` (a handling this service does not know: the default applied)',
    schema: { type: 'string' },
  },
};

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

/** `: did you mean "tag"?` after the words about an unknown field one edit from an optional field `body` lacks; else nothing. */
function suggestion(name: string, optional: readonly string[] | undefined, body: object | undefined): string {
  const field = optional === undefined ? undefined : meantField(name, optional, body ?? {});
  return field === undefined ? '' : `: did you mean ${quoted(field)}?`;
}

/**
 * The words of a refusal naming every unknown field: `body has an unknown field "tga": did you mean "tag"?`,
 * `body has unknown fields "a", "tga" (did you mean "tag"?) and "c"`. `optional`: the operation's optional
 * fields, for the near-misses (a field `body` lacks, one edit away; a required field missing is a refusal
 * of its own, which names the typo: validation-messages.ts).
 */
export function unknownFieldsProblem(where: string, fields: readonly string[], optional?: readonly string[], body?: object): string {
  if (fields.length === 1) return `${where} has an unknown field ${quoted(fields[0]!)}${suggestion(fields[0]!, optional, body)}`;
  const names = fields.slice(0, WARNINGS_MAX).map((name) => {
    const hint = suggestion(name, optional, body);
    return hint === '' ? quoted(name) : `${quoted(name)} (${hint.slice(2)})`;
  });
  const more = fields.length - names.length;
  if (more > 0) names.push(`${more} more`);
  return `${where} has unknown fields ${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
}

/** The warnings of one body's ignored fields: one per field, the ones past WARNINGS_MAX counted in one more. */
export function ignoredWarnings(fields: readonly string[], optional?: readonly string[], body?: object): string[] {
  const texts = fields.slice(0, WARNINGS_MAX).map((name) => `unknown field ${quoted(name)} was ignored${suggestion(name, optional, body)}`);
  const more = fields.length - WARNINGS_MAX;
  if (more > 0) texts.push(`${more} more unknown ${more === 1 ? 'field was' : 'fields were'} ignored`);
  return texts;
}

/**
 * The unknown fields an import ignored, counted row by row within a fixed budget: the first WARNINGS_MAX
 * names with the rows each was in (what the warnings name), then the distinct others up to OTHERS_COUNTED,
 * then only the rows they were in. A name is kept as shown (cut at 60 characters, a copy: never a slice
 * holding a long name, or the row it came from, in memory), so that what is held is bounded whatever the
 * rows hold: millions of distinct names cost what a thousand do.
 */
export class IgnoredFields {
  /** The first WARNINGS_MAX names, as shown, and the rows each was in. */
  private readonly counted = new Map<string, number>();
  /** The distinct names after them, as shown, up to OTHERS_COUNTED. */
  private readonly others = new Set<string>();
  /** Whether a name past OTHERS_COUNTED came: their number is then more than `others` holds. */
  private overflowed = false;
  /** The rows with a field among the others (or past them). */
  private otherRows = 0;

  /** `optional`: the optional fields of a row, for the near-misses the warnings name. */
  constructor(private readonly optional?: readonly string[]) {}

  /** One row's unknown fields (each once: a row's fields are distinct). */
  add(fields: readonly string[]): void {
    let other = false;
    // Names cut alike (their first 60 characters the same) are one name here, counted once a row.
    let cut: Set<string> | undefined;
    for (const field of fields) {
      const name = kept(field);
      if (name !== field) {
        if (cut?.has(name)) continue;
        (cut ??= new Set()).add(name);
      }
      const rows = this.counted.get(name);
      if (rows !== undefined) this.counted.set(name, rows + 1);
      else if (this.counted.size < WARNINGS_MAX) this.counted.set(name, 1);
      else {
        other = true;
        if (this.others.size < OTHERS_COUNTED) this.others.add(name);
        else if (!this.others.has(name)) this.overflowed = true;
      }
    }
    if (other) this.otherRows++;
  }

  /** The warnings: one per counted field with its rows, then one for the others (how many, at least, and in how many rows). */
  warnings(): string[] {
    // The names are kept shortened already: JSON, not cut again.
    const texts = [...this.counted].map(
      ([name, rows]) => `unknown field ${JSON.stringify(name)} was ignored in ${count(rows, 'row')}${suggestion(name, this.optional, undefined)}`,
    );
    if (this.otherRows === 0) return texts;
    const how = this.overflowed
      ? `more than ${this.others.size} more unknown fields were`
      : `${this.others.size} more unknown ${this.others.size === 1 ? 'field was' : 'fields were'}`;
    texts.push(`${how} ignored, in ${count(this.otherRows, 'row')}`);
    return texts;
  }
}

/**
 * A field's name as an import keeps it: as shown (shortName), in a string of its own. A cut name is a
 * slice, which V8 may keep as a view of the whole name (up to IMPORT_MAX_ROW_BYTES): copied, it holds only
 * its own characters.
 */
function kept(name: string): string {
  const short = shortName(name);
  return short === name ? name : Buffer.from(short, 'utf16le').toString('utf16le');
}

/**
 * What this request does with unknown fields: its own Prefer, else the operator's default; answered with
 * Preference-Applied when it asked, and with a Warning when it asked for a handling this service does not
 * know (`handling=strickt`: the default applied, and said, rather than a typo lost in silence).
 */
export function applyHandling(request: FastifyRequest, reply: FastifyReply, fallback: Handling): Handling {
  const { prefer } = request.headers;
  // Most requests send no Prefer: nothing more to do.
  if (prefer === undefined) return fallback;
  const asked = preferredHandling(prefer);
  if (asked !== undefined) {
    preferenceApplied(reply, `handling=${asked}`);
    return asked;
  }
  const given = preferences(prefer).get('handling');
  if (given !== undefined) addWarning(reply, handlingNotUnderstood(given, fallback));
  return fallback;
}

const HANDLINGS: readonly Handling[] = ['strict', 'lenient'];

/** The Warning of a Prefer: handling=… this service does not know, the handling meant named when one edit away. */
function handlingNotUnderstood(value: string, applied: Handling): string {
  const meant = HANDLINGS.find((handling) => oneEditAway(value, handling));
  const shown = shortName(value);
  return `Prefer: handling=${shown} was not understood (${meant === undefined ? 'handling is strict or lenient' : `did you mean handling=${meant}?`}); handled as ${applied}, the service's default`;
}

/** A route's body fields: every one it names, and those it does not require (the near-misses a message may name). */
interface BodyFields {
  known: ReadonlySet<string>;
  optional: readonly string[];
}

/** A strict request's unknown fields as one problem (validation failed: the error handler tells it with the others). */
function strictProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  { known, optional }: BodyFields,
  fallback: Handling,
): UnknownFieldsProblem | undefined {
  if (applyHandling(request, reply, fallback) !== 'strict') return undefined;
  const unknown = unknownFields(request.body, known);
  return unknown.length === 0
    ? undefined
    : { message: unknownFieldsProblem('body', unknown, optional, request.body as object), field: bodyField(unknown[0]!) };
}

/** An unknown field of a body as the answer's `field` names it: `body.tga` (a long name cut as the message cuts it). */
export function bodyField(name: string): string {
  return `body.${shortName(name)}`;
}

function checkHook({ known, optional }: BodyFields, fallback: Handling): preHandlerHookHandler {
  return function checkUnknownFields(request, reply, done) {
    const handling = applyHandling(request, reply, fallback);
    const unknown = unknownFields(request.body, known);
    if (unknown.length === 0) return done();
    const body = request.body as object;
    if (handling === 'strict') {
      return done(new HttpError('unknown_field', unknownFieldsProblem('body', unknown, optional, body), { field: bodyField(unknown[0]!) }));
    }
    for (const text of ignoredWarnings(unknown, optional, body)) addWarning(reply, text);
    done();
  };
}

/** The named fields of an object schema that lets other members through; undefined for any other schema. */
function namedFields(schema: unknown): BodyFields | undefined {
  const object = schema as { type?: unknown; properties?: Record<string, unknown>; required?: string[]; additionalProperties?: unknown } | undefined;
  if (object?.type !== 'object' || object.properties === undefined || object.additionalProperties === false) return undefined;
  return { known: new Set(Object.keys(object.properties)), optional: optionalFields(object) };
}

/**
 * Gives every route whose body is an object of named fields the check, as a preHandler (after validation:
 * a valid body is checked), and notes its fields in its config for the error handler. `fallback`: the
 * operator's default (UNKNOWN_FIELDS).
 */
export function installUnknownFields(app: FastifyInstance, fallback: Handling): void {
  app.addHook('onRoute', (route) => {
    const fields = namedFields(route.schema?.body);
    if (fields === undefined) return;
    // Documented where the route declares its headers, so that the OpenAPI document cannot leave it out.
    if ((route.schema?.headers as { properties?: Record<string, unknown> } | undefined)?.properties?.prefer === undefined) {
      throw new Error(
        `route ${String(route.method)} ${route.url}: its body may hold unknown fields, so its headers must declare Prefer (PreferHandlingHeaders)`,
      );
    }
    route.config = { ...route.config, unknownFieldsProblem: (request, reply) => strictProblem(request, reply, fields, fallback) };
    const hook = checkHook(fields, fallback);
    route.preHandler = route.preHandler === undefined ? [hook] : [hook, ...(Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler])];
  });
}
