import assert from 'node:assert/strict';

/** The OpenAPI document, walked as plain JSON. */
/* eslint-disable-next-line @typescript-eslint/no-explicit-any -- the document is walked as plain JSON */
export type Json = any;

export const PLANT_OPERATIONS = ['post /plants', 'get /plants', 'get /plants/{id}', 'put /plants/{id}', 'patch /plants/{id}', 'delete /plants/{id}'];
export const PUBLIC_OPERATIONS = ['get /', 'get /healthz', 'get /readyz', 'get /openapi.json'];
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every operation the document describes, as "method /path/{param}". */
export function documentedOperations(doc: Json): string[] {
  return Object.entries(doc.paths as Record<string, Json>)
    .flatMap(([path, item]) =>
      Object.keys(item)
        .filter((k) => METHODS.includes(k))
        .map((method) => `${method} ${path}`),
    )
    .sort();
}

/** The operation of a "method /path" key, or undefined. */
export function operation(doc: Json, key: string): Json {
  const [method, path] = key.split(' ');
  return doc.paths[path!]?.[method!];
}

/** What a local "$ref" points at in the document, or undefined. */
export function resolve(doc: Json, ref: string): unknown {
  assert.ok(ref.startsWith('#/'), `only local references: ${ref}`);
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<Json>((node, part) => (node === undefined ? undefined : node[part]), doc);
}

/** An operation's answer for a status, a reference to the components (the parser's 408, 414, 431) followed. */
export function responseOf(doc: Json, op: Json, status: string): Json {
  const response = op.responses[status];
  return response?.$ref === undefined ? response : resolve(doc, response.$ref);
}
