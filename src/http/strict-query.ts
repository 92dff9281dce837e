import { Type, type TProperties } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';

/**
 * Strict query strings: every operation answers 400 naming a query parameter it does not take
 * (`unknown query parameter "nme"`), so a typo or a parameter the client hoped for is never silently
 * ignored. The rule is the schema's own `additionalProperties: false`, so the OpenAPI document lists
 * exactly the parameters accepted, and the typed client cannot send another. A route without query
 * parameters gets the empty strict schema; one whose query schema is not strict is refused when it is
 * registered. Routes without any schema (the /docs page and its files, for browsers) are left alone.
 */

/** The query schema of an operation that takes no query parameters. */
const NO_QUERY = Type.Object({}, { additionalProperties: false });

/** A route's query parameters: a strict object of these properties. */
export const Query = <P extends TProperties>(properties: P) => Type.Object(properties, { additionalProperties: false });

export function requireStrictQueries(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema;
    if (schema === undefined) return;
    if (schema.querystring === undefined) {
      schema.querystring = NO_QUERY;
      return;
    }
    if ((schema.querystring as { additionalProperties?: unknown }).additionalProperties !== false) {
      throw new Error(`route ${String(route.method)} ${route.url}: its query schema must say additionalProperties: false (use Query())`);
    }
  });
}
