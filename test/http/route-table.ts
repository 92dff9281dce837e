import assert from 'node:assert/strict';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { assertErrorShape } from '../helpers.js';
import type { TestApp } from '../helpers.js';

/**
 * The operations of the served OpenAPI document, which is made from the app's registered routes
 * (test/openapi.test.ts holds that it documents every one but the docs page): the table the rules of
 * test/http/route-rules.test.ts run over, so that a route added tomorrow is held to them without a line here.
 */

// The document is JSON of any shape; the tests read it loosely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface Operation {
  method: InjectOptions['method'] & string;
  /** As the document names it: `/plants/{id}`. */
  path: string;
  op: Json;
  /** Its path parameters (its ids), with the example each has. */
  params: Array<{ name: string; example: string }>;
  /** Its request body, if any: the media type first listed and the example the document gives for it. */
  body?: { type: string; example: unknown; json: boolean; namedFields: boolean };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export async function operations(t: TestApp): Promise<{ doc: Json; operations: Operation[] }> {
  const doc: Json = (await t.call('GET', '/openapi.json', { token: null })).json();
  const list: Operation[] = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m] !== undefined).map((m) => {
      const op = item[m];
      const params = ((op.parameters ?? []) as Json[])
        .filter((p) => p.in === 'path')
        .map((p) => ({ name: p.name as string, example: String(p.schema.examples?.[0] ?? p.example ?? '') }));
      const content = op.requestBody?.content as Record<string, Json> | undefined;
      const [type, media] = content === undefined ? [] : Object.entries(content)[0]!;
      const schema = resolve(doc, media?.schema);
      const body =
        type === undefined
          ? undefined
          : {
              type,
              example: media.example,
              json: type.endsWith('json') && schema?.type === 'object',
              namedFields: schema?.type === 'object' && schema.properties !== undefined && schema.additionalProperties !== false,
            };
      return { method: m.toUpperCase() as Operation['method'], path, op, params, ...(body && { body }) };
    }),
  );
  return { doc, operations: list };
}

function resolve(doc: Json, schema: Json): Json {
  const ref = schema?.$ref as string | undefined;
  return ref === undefined ? schema : doc.components.schemas[ref.split('/').pop()!];
}

/** The operation's path with these ids in it (each parameter's example by default). */
export function urlOf(operation: Operation, ids: Record<string, string> = {}): string {
  return operation.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const given = ids[name] ?? operation.params.find((p) => p.name === name)!.example;
    return encodeURIComponent(given);
  });
}

/** The body of the request, as sent: the example, as JSON where it is data. */
export function payloadOf(operation: Operation, example: unknown = operation.body?.example): string | undefined {
  if (operation.body === undefined) return undefined;
  return typeof example === 'string' ? example : JSON.stringify(example);
}

/** The codes the document lists for this status of this operation. */
export function listedCodes(operation: Operation, status: number): string[] {
  return (operation.op.responses[String(status)]?.['x-error-codes'] as string[] | undefined) ?? [];
}

/** Any error answer (`what` the request was, for the message): the Error shape, and a code the document lists for its status; the code. */
export function anyListed(operation: Operation, res: LightMyRequestResponse, what = ''): string | undefined {
  if (res.statusCode < 400) return undefined;
  const body = res.json<{ code: string }>();
  assertErrorShape(body, res.statusCode);
  const listed = listedCodes(operation, res.statusCode);
  assert.ok(
    listed.includes(body.code),
    `${operation.method} ${operation.path}${what === '' ? '' : ` ${what}`}: ${body.code} (${res.payload}) is listed for ${res.statusCode}: ${listed.join(', ') || 'nothing'}`,
  );
  return body.code;
}
