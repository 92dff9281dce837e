import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { int64AsStrings } from '../json/int64-strings.js';
import { parseInt64 } from '../model/plant-id.js';
import { preferenceApplied, preferences } from './preferences.js';
import { vary } from './caching.js';

/**
 * `Prefer: int64=string` (RFC 7240; docs/api.md, "Ids for JavaScript"): the client asks for int64 values
 * (plant ids) written as JSON strings, which JSON.parse keeps exact, and may send them so. Opt-in, so that
 * the specified contract (ids as JSON integers) holds for every other client; answered with
 * `Preference-Applied: int64=string`, and `Vary: Prefer` on every answer that can hold int64 values.
 * Which members are int64 is read from each route's own schemas as it registers (format int64): its
 * answers' (any depth: a plant's `id`, an event's plant, a delivery's `plantId`) and its body's top-level ones.
 */

interface Int64Members {
  /** The members written as strings in the route's answers; undefined: none. */
  answer: ReadonlySet<string> | undefined;
  /** The body's top-level members taken as strings too; undefined: none. */
  body: readonly string[] | undefined;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set as the route registers (installInt64Preference): its int64 members. */
    int64?: Int64Members;
  }
}

const PREFERENCE = 'int64=string';

/** Whether the request asked for int64 values as strings. */
export function prefersInt64Strings(prefer: string | readonly string[] | undefined): boolean {
  return prefer !== undefined && preferences(prefer).get('int64') === 'string';
}

/** The names of the int64 members anywhere in a schema (properties, items, unions, compositions). */
export function int64Names(schema: unknown, found = new Set<string>()): Set<string> {
  if (schema === null || typeof schema !== 'object') return found;
  const node = schema as Record<string, unknown>;
  for (const [name, member] of Object.entries((node.properties ?? {}) as Record<string, { format?: string }>)) {
    if (member.format === 'int64') found.add(name);
    int64Names(member, found);
  }
  int64Names(node.items, found);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) for (const part of (node[key] ?? []) as unknown[]) int64Names(part, found);
  return found;
}

function membersOf(route: RouteOptions): Int64Members | undefined {
  const answers = Object.entries((route.schema?.response ?? {}) as Record<string, unknown>).filter(([status]) => status.startsWith('2'));
  const answer = new Set(answers.flatMap(([, schema]) => [...int64Names(schema)]));
  const properties = (route.schema?.body as { properties?: Record<string, { format?: string }> } | undefined)?.properties ?? {};
  const body = Object.keys(properties).filter((name) => properties[name]!.format === 'int64');
  if (answer.size === 0 && body.length === 0) return undefined;
  return { answer: answer.size > 0 ? answer : undefined, body: body.length > 0 ? body : undefined };
}

/** Reads each route's int64 members as it registers: the routes without any pay nothing per request. */
export function installInt64Preference(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const members = membersOf(route);
    if (members !== undefined) route.config = { ...route.config, int64: members };
  });
}

/**
 * A parsed body with its int64 members given as strings (`"id": "9007199254740993"`) taken as the
 * integers they spell, when the request asked for int64 strings; others are left for validation to refuse.
 */
export function int64Body(request: FastifyRequest, body: unknown): unknown {
  const members = request.routeOptions.config.int64?.body;
  if (members === undefined || body === null || typeof body !== 'object' || !prefersInt64Strings(request.headers.prefer)) return body;
  const object = body as Record<string, unknown>;
  for (const name of members) {
    const value = object[name];
    if (typeof value !== 'string') continue;
    const id = parseInt64(value);
    if (id !== undefined) object[name] = id;
  }
  return body;
}

/** Says the preference was applied (a stream that writes its int64 values as strings itself: GET /events). */
export function int64Applied(reply: FastifyReply): void {
  preferenceApplied(reply, PREFERENCE);
}

/**
 * An answer of a route with int64 members, as it goes (the onSend step, app/pipeline.ts): `Vary: Prefer`
 * when its answers hold some, and for a client that asked, a JSON text with them as strings.
 */
export function int64Answer(request: FastifyRequest, reply: FastifyReply, payload: unknown, members: Int64Members): unknown {
  if (members.answer !== undefined) vary(reply, 'Prefer');
  if (typeof payload !== 'string' || !prefersInt64Strings(request.headers.prefer)) return payload;
  if (!String(reply.getHeader('content-type')).startsWith('application/json')) return payload;
  int64Applied(reply);
  return members.answer === undefined ? payload : int64AsStrings(payload, members.answer);
}
