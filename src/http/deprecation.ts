import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { HttpError } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Query parameters renamed (old name → the one name now): the old one is still taken, until the
     * sunset, and its answers say it is deprecated (installRenamedQueries). Its schema must mark it `deprecated`.
     */
    renamedQuery?: Readonly<Record<string, string>>;
  }
}

/**
 * What the API deprecates, and how a client learns of it (docs/api.md, "Versions and deprecations"). A
 * deprecated name or header keeps working at least twelve months from the release that deprecates it, and
 * goes only with a major release: the sunset is the earliest day it may go.
 */
export const DEPRECATION = {
  /** When this release's deprecations took effect: 1.1.0. */
  since: Date.UTC(2026, 11, 1),
  /** The earliest day they may be removed, by 2.0.0 at the soonest. */
  sunset: Date.UTC(2027, 11, 1),
} as const;

/** RFC 9745: `@<seconds since the epoch>`, a structured field Date. */
const DEPRECATION_HEADER = `@${DEPRECATION.since / 1000}`;
/** RFC 8594: an HTTP-date. */
export const SUNSET_HEADER = new Date(DEPRECATION.sunset).toUTCString();

/**
 * The documentation of a route's deprecations, for Link rel="deprecation" (RFC 9745 §3): the operation
 * on the docs page (Swagger UI's deep link, `#/<tag>/<operationId>`), where the deprecated parameter is
 * marked and names its replacement. Relative to the request's path, so that it holds behind a proxy's prefix.
 */
function docsLink(route: RouteOptions): string {
  const depth = route.url.split('/').length - 2;
  const tag = route.schema?.tags?.[0] ?? '';
  const operation = route.schema?.operationId ?? '';
  return `<${'../'.repeat(depth)}docs#/${tag}/${operation}>; rel="deprecation"; type="text/html"`;
}

/** The answer headers of a route that takes a deprecated name, for the OpenAPI document (on all its answers: openapi/headers.ts). */
export const DEPRECATION_HEADERS = {
  Deprecation: {
    description: 'RFC 9745, when the request used a deprecated name (a parameter renamed): `@<seconds since the epoch>`, when it was deprecated',
    schema: { type: 'string' },
  },
  Sunset: {
    description: 'RFC 8594, with Deprecation: the earliest day the deprecated name may stop working (an HTTP-date)',
    schema: { type: 'string' },
  },
};

/** The 400 of a parameter sent under both its names. */
export function bothNames(old: string, now: string): string {
  return `querystring.${old} is the deprecated name of ${now}: send ${now} alone`;
}

/** The 400 of a request that sends a parameter by both its names. */
export function bothNamesRefused(old: string, now: string): HttpError {
  return new HttpError('conflicting_parameters', bothNames(old, now), { field: `querystring.${old}` });
}

/** The requests of this app that used a deprecated name: their answers say so. */
const usedDeprecated = new WeakSet<FastifyRequest>();

/** Checks, as a route registers, that its renamed parameters are in its query schema, the old ones marked deprecated. */
function checkRenamed(route: RouteOptions, renamed: Readonly<Record<string, string>>): void {
  const properties = (route.schema?.querystring as { properties?: Record<string, { deprecated?: boolean }> } | undefined)?.properties ?? {};
  for (const [old, now] of Object.entries(renamed)) {
    if (properties[old]?.deprecated !== true || properties[now] === undefined) {
      throw new Error(
        `route ${String(route.method)} ${route.url}: renamedQuery ${old} → ${now} needs both in its query schema, ${old} marked deprecated`,
      );
    }
  }
  for (const [name, schema] of Object.entries(properties)) {
    if (schema.deprecated === true && renamed[name] === undefined) {
      throw new Error(`route ${String(route.method)} ${route.url}: query parameter ${name} is deprecated: say its new name in renamedQuery`);
    }
  }
}

/**
 * Renamed query parameters: a route that says `config.renamedQuery` takes the old name as the new one
 * (both at once is 400), and its answer, whatever its status, then carries `Deprecation` (RFC 9745),
 * `Sunset` (RFC 8594), `Link: <…>; rel="deprecation"` and a `Warning` in words. Hooks only on such routes:
 * others pay nothing.
 */
export function installRenamedQueries(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const renamed = route.config?.renamedQuery;
    if (renamed === undefined) {
      checkRenamed(route, {});
      return;
    }
    checkRenamed(route, renamed);
    const link = docsLink(route);
    const warnings = Object.fromEntries(
      Object.entries(renamed).map(([old, now]) => [old, `299 - "querystring.${old} is deprecated: use ${now} (sunset ${SUNSET_HEADER})"`]),
    );
    const said = (request: FastifyRequest, reply: FastifyReply, used: string[]): void => {
      usedDeprecated.add(request);
      reply.header('deprecation', DEPRECATION_HEADER).header('sunset', SUNSET_HEADER).header('warning', used);
    };
    const preHandler = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
      const query = request.query as Record<string, unknown>;
      const used: string[] = [];
      for (const [old, now] of Object.entries(renamed)) {
        if (query[old] === undefined) continue;
        if (query[now] !== undefined) return done(bothNamesRefused(old, now));
        query[now] = query[old];
        delete query[old];
        used.push(warnings[old]!);
      }
      if (used.length > 0) said(request, reply, used);
      done();
    };
    // The Link is added as the answer goes: the handler may set a Link of its own (the next page). A request
    // refused before the preHandler (401, a value its schema refuses) still used the old name: said too.
    const onSend = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void): void => {
      if (!usedDeprecated.has(request) && reply.statusCode >= 400) {
        const query = request.query as Record<string, unknown> | undefined;
        const used = Object.keys(renamed).flatMap((old) => (query?.[old] === undefined ? [] : [warnings[old]!]));
        if (used.length > 0) said(request, reply, used);
      }
      if (usedDeprecated.has(request)) {
        const next = reply.getHeader('link');
        reply.header('link', next === undefined ? link : `${String(next)}, ${link}`);
      }
      done(null, payload);
    };
    route.preHandler = [...hooksOf(route.preHandler), preHandler];
    route.onSend = [...hooksOf(route.onSend), onSend];
  });
}

function hooksOf<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}
