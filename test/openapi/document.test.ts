import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import { testApp } from '../helpers.js';
import { documentedOperations, operation, PLANT_OPERATIONS, PUBLIC_OPERATIONS, resolve, responseOf, type Json } from './walk.js';

/**
 * The OpenAPI document as a document (src/openapi/document.ts): served, valid OpenAPI 3.1, every route and
 * nothing else, its references resolved, every error in the Error shape, one tag an operation, no internals.
 * What it says of each operation: operations.test.ts; what it teaches: docs.test.ts.
 */

/** Every route the app has, as "method /path/{param}", HEAD left out (Fastify adds one to every GET). */
function registeredOperations(app: FastifyInstance): string[] {
  const found: string[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([^)]*)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    const path = stack.join('').replace(/:(\w+)/g, '{$1}');
    for (const method of (match[3] ?? '').split(', ').filter((m) => m !== '' && m !== 'HEAD')) {
      found.push(`${method.toLowerCase()} ${path}`);
    }
  }
  return found.sort();
}

/** Every "$ref" in the document, with where it was found. */
function refs(node: Json, where = '#'): Array<[string, string]> {
  if (Array.isArray(node)) return node.flatMap((item, i) => refs(item, `${where}/${i}`));
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === '$ref' ? [[String(value), where] as [string, string]] : refs(value, `${where}/${key}`),
  );
}

describe('GET /openapi.json', async () => {
  const t = await testApp(after);
  const res = await t.call('GET', '/openapi.json', { token: null });
  const doc: Json = res.json();
  const schemas = doc.components?.schemas ?? {};
  const op = (key: string): Json => operation(doc, key);

  it('is served without a token as application/json', () => {
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json\b/);
  });

  it('declares its own 200 as application/json, an object', () => {
    const content = op('get /openapi.json').responses['200'].content;
    assert.deepEqual(Object.keys(content ?? {}), ['application/json'], 'a checker finds the media type it is sent in');
    assert.equal(content['application/json'].schema.type, 'object');
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.equal(validator.version, '3.1');
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, '1.0.0');
  });

  it('documents every registered route but the docs page, and nothing else', () => {
    // GET /docs, the console and their files are for browsers, not part of the JSON API (src/docs/routes.ts,
    // src/console/routes.ts). GET / is: it answers JSON to a client that does not ask for HTML.
    const forBrowsers = (key: string) => ['get /docs', 'get /console'].includes(key) || /^get \/(docs|console)\//.test(key);
    const api = registeredOperations(t.app).filter((key) => !forBrowsers(key));
    assert.deepEqual(documentedOperations(doc), api);
    for (const key of [...PLANT_OPERATIONS, ...PUBLIC_OPERATIONS]) assert.ok(op(key), `${key} is documented`);
  });

  it('resolves every $ref', () => {
    const all = refs(doc);
    assert.ok(all.length > 0);
    for (const [ref, where] of all) assert.notEqual(resolve(doc, ref), undefined, `${ref} at ${where}`);
  });

  it('gives every operation a unique operationId', () => {
    const ids = documentedOperations(doc).map((key) => op(key).operationId);
    for (const id of ids) assert.equal(typeof id, 'string');
    assert.equal(new Set(ids).size, ids.length);
  });

  it('every 4xx/5xx answer is documented as the Error shape', () => {
    for (const key of documentedOperations(doc)) {
      for (const status of Object.keys(op(key).responses as Record<string, Json>)) {
        const response = responseOf(doc, op(key), status);
        assert.equal(typeof response.description, 'string', `${key} ${status}`);
        if (Number(status) >= 400) {
          assert.deepEqual(response.content?.['application/json']?.schema, { $ref: '#/components/schemas/Error' }, `${key} ${status}`);
        }
      }
    }
  });

  it("documents 500 and Node's parser's 408, 414 and 431 on every operation; any other error as a default Error answer", () => {
    for (const key of documentedOperations(doc)) {
      assert.deepEqual(op(key).responses.default?.content['application/json'].schema, { $ref: '#/components/schemas/Error' }, key);
      for (const status of ['408', '414', '431', '500']) assert.ok(responseOf(doc, op(key), status)?.content, `${key} ${status}`);
    }
  });

  it('groups every operation under one tag, and describes each tag at the top level', () => {
    const tags = new Map((doc.tags as Json[]).map((tag) => [tag.name as string, tag.description as string]));
    assert.deepEqual([...tags.keys()].sort(), ['events', 'plants', 'system', 'tokens', 'webhooks']);
    for (const description of tags.values()) assert.ok(description.length > 20, description);
    for (const key of documentedOperations(doc)) {
      const [tag, ...more] = op(key).tags as string[];
      assert.ok(tag !== undefined && tags.has(tag) && more.length === 0, `${key}: ${String(op(key).tags)}`);
    }
    assert.deepEqual(op('post /plants').tags, ['plants']);
    assert.deepEqual(op('post /webhooks').tags, ['webhooks']);
    assert.deepEqual(op('get /events').tags, ['events']);
    assert.deepEqual(op('get /readyz').tags, ['system']);
    assert.deepEqual(op('get /token').tags, ['tokens']);
  });

  it('shows no TypeBox internals or validator-only keywords', () => {
    const text = JSON.stringify(doc);
    for (const word of ['"int64":true', '"decimal":true', 'TypeBox', '[Kind]']) assert.ok(!text.includes(word), word);
  });

  it('gives integer examples only within safe integers, which every tool shows unrounded', () => {
    // Every value under an `examples` or `example` key, anywhere in the document.
    const examples = (node: Json): unknown[] => {
      if (Array.isArray(node)) return node.flatMap(examples);
      if (node === null || typeof node !== 'object') return [];
      return Object.entries(node).flatMap(([key, value]) => [
        ...(key === 'examples' && Array.isArray(value) ? value : key === 'example' ? [value] : []),
        ...examples(value),
      ]);
    };
    const numbers = (value: unknown): number[] =>
      typeof value === 'number' ? [value] : value !== null && typeof value === 'object' ? Object.values(value).flatMap(numbers) : [];
    const found = examples(doc).flatMap(numbers);
    assert.deepEqual(schemas.StoredPlant.properties.id.examples, [1]);
    // The document is parsed by JSON.parse here: an example beyond 2^53 arrives rounded, and unsafe.
    for (const n of found) assert.ok(!Number.isInteger(n) || Number.isSafeInteger(n), String(n));
  });

  it('is the same document on every request', async () => {
    const again = await t.call('GET', '/openapi.json', { token: null });
    assert.equal(again.payload, res.payload);
  });
});
