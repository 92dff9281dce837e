import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import { testApp } from './helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the document is walked as plain JSON */
type Json = any;

const PLANT_OPERATIONS = ['post /plants', 'get /plants', 'get /plants/{id}', 'put /plants/{id}', 'patch /plants/{id}', 'delete /plants/{id}'];
const PUBLIC_OPERATIONS = ['get /', 'get /healthz', 'get /readyz', 'get /openapi.json'];
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

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

function documentedOperations(doc: Json): string[] {
  return Object.entries(doc.paths as Record<string, Json>)
    .flatMap(([path, item]) =>
      Object.keys(item)
        .filter((k) => METHODS.includes(k))
        .map((method) => `${method} ${path}`),
    )
    .sort();
}

/** Every "$ref" in the document, with where it was found. */
function refs(node: Json, where = '#'): Array<[string, string]> {
  if (Array.isArray(node)) return node.flatMap((item, i) => refs(item, `${where}/${i}`));
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === '$ref' ? [[String(value), where] as [string, string]] : refs(value, `${where}/${key}`),
  );
}

function resolve(doc: Json, ref: string): unknown {
  assert.ok(ref.startsWith('#/'), `only local references: ${ref}`);
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<Json>((node, part) => (node === undefined ? undefined : node[part]), doc);
}

describe('GET /openapi.json', async () => {
  const t = await testApp(after);
  const res = await t.call('GET', '/openapi.json', { token: null });
  const doc: Json = res.json();
  const schemas = doc.components?.schemas ?? {};
  const op = (key: string): Json => {
    const [method, path] = key.split(' ');
    return doc.paths[path!]?.[method!];
  };

  it('is served without a token as application/json', () => {
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json\b/);
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

  it("keeps the specification's NewPlant, Plant and Error", () => {
    const { NewPlant, Plant, Error: ErrorSchema } = schemas;
    assert.equal(NewPlant.type, 'object');
    assert.deepEqual([...NewPlant.required].sort(), ['id', 'name']);
    assert.deepEqual(NewPlant.properties.id, { ...NewPlant.properties.id, type: 'integer', format: 'int64' });
    assert.equal(NewPlant.properties.name.type, 'string');
    assert.equal(NewPlant.properties.tag.type, 'string');
    assert.equal(Plant.type, 'object');
    assert.deepEqual(Plant.required, ['name']);
    assert.deepEqual(Object.keys(Plant.properties).sort(), ['name', 'tag']);
    assert.equal(ErrorSchema.type, 'object');
    assert.deepEqual([...ErrorSchema.required].sort(), ['error', 'message']);
    assert.equal(ErrorSchema.properties.error.type, 'integer');
    assert.equal(ErrorSchema.properties.error.format, 'int32');
    assert.equal(ErrorSchema.properties.message.type, 'string');
  });

  it('states the length limits it enforces', () => {
    assert.equal(schemas.NewPlant.properties.name.minLength, 1);
    assert.equal(schemas.NewPlant.properties.name.maxLength, 256);
    assert.equal(schemas.NewPlant.properties.tag.maxLength, 64);
  });

  it("declares bearerAuth, the specification's scheme", () => {
    assert.deepEqual(doc.components.securitySchemes.bearerAuth, { ...doc.components.securitySchemes.bearerAuth, type: 'http', scheme: 'bearer' });
  });

  it('POST /plants: body NewPlant, 200 Plant, 400 Error, and its other statuses', () => {
    const post = op('post /plants');
    assert.equal(post.requestBody.required, true);
    assert.deepEqual(post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/NewPlant' });
    assert.deepEqual(post.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/Plant' });
    for (const status of ['400', '401', '403', '412', '413', '415']) {
      assert.deepEqual(post.responses[status]?.content['application/json'].schema, { $ref: '#/components/schemas/Error' }, status);
    }
  });

  it('declares Idempotency-Key on every POST, with its 409 and 422 and the Idempotent-Replayed answer header', () => {
    const posts = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, item]) =>
      item.post ? [[path, item.post] as const] : [],
    );
    assert.deepEqual(posts.map(([path]) => path).sort(), [
      '/plants',
      '/plants/import',
      '/tokens',
      '/webhooks',
      '/webhooks/{id}/replay',
      '/webhooks/{id}/rotate-secret',
    ]);
    for (const [path, post] of posts) {
      const header = (post.parameters as Json[]).find((p) => p.in === 'header' && p.name === 'idempotency-key');
      assert.ok(header, `POST ${path} declares the header`);
      assert.equal(header.required, false);
      assert.equal(header.schema.type, 'string');
      assert.match(header.description, /IDEMPOTENCY_KEY_TTL/);
      for (const status of ['409', '422']) assert.ok(post.responses[status], `POST ${path} documents ${status}`);
      const success = Object.keys(post.responses).find((status) => status.startsWith('2'))!;
      assert.ok(post.responses[success].headers['Idempotent-Replayed'], `POST ${path} ${success} names Idempotent-Replayed`);
    }
    assert.match(doc.info.description, /## Retrying safely/);
  });

  it('every plant operation needs bearerAuth; the public ones say security: []', () => {
    for (const key of PLANT_OPERATIONS) {
      const security = op(key).security;
      assert.ok(Array.isArray(security) && security.length > 0, key);
      assert.ok(
        security.every((s: Json) => Object.keys(s).includes('bearerAuth')),
        key,
      );
      assert.ok(op(key).responses['401'], `${key} documents 401`);
    }
    for (const key of PUBLIC_OPERATIONS) assert.deepEqual(op(key).security, [], key);
  });

  it('every 4xx/5xx answer is documented as the Error shape', () => {
    for (const key of documentedOperations(doc)) {
      for (const [status, response] of Object.entries(op(key).responses as Record<string, Json>)) {
        assert.equal(typeof response.description, 'string', `${key} ${status}`);
        if (Number(status) >= 400) {
          assert.deepEqual(response.content?.['application/json']?.schema, { $ref: '#/components/schemas/Error' }, `${key} ${status}`);
        }
      }
    }
  });

  it('documents any other error (500 and the like) as a default Error answer', () => {
    for (const key of documentedOperations(doc)) {
      assert.deepEqual(op(key).responses.default?.content['application/json'].schema, { $ref: '#/components/schemas/Error' }, key);
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

  it('documents the headers that go with 201, 401, 403 and 503', () => {
    assert.match(op('put /plants/{id}').responses['201'].headers.Location.description, /plant created/);
    assert.match(op('post /webhooks').responses['201'].headers.Location.description, /endpoint created/);
    assert.ok(op('get /plants').responses['401'].headers['WWW-Authenticate']);
    assert.ok(op('post /plants').responses['403'].headers['WWW-Authenticate']);
    assert.ok(op('post /plants').responses['503'].headers['Retry-After']);
  });

  it('documents the paging, the merge patch and the 201/204 answers', () => {
    const list = op('get /plants');
    const names = list.parameters.map((p: Json) => `${p.in}:${p.name}`).sort();
    // Accept is chosen by the 200's media types (OpenAPI ignores an Accept parameter; /docs has its own selector).
    assert.deepEqual(names, [
      'header:if-none-match',
      'header:prefer',
      'query:after',
      'query:cursor',
      'query:format',
      'query:id',
      'query:limit',
      'query:q',
      'query:sort',
      'query:tag',
    ]);
    assert.deepEqual(Object.keys(list.responses['200'].content).sort(), ['application/json', 'application/x-ndjson', 'text/csv']);
    const limit = list.parameters.find((p: Json) => p.name === 'limit');
    assert.equal(limit.schema.minimum, 1);
    assert.equal(limit.schema.maximum, 1000);
    assert.equal(limit.schema.default, 100);
    assert.equal(limit.schema.format, 'int32');
    const id = op('get /plants/{id}').parameters.find((p: Json) => p.name === 'id');
    assert.equal(id.in, 'path');
    assert.equal(id.required, true);
    assert.equal(id.schema.format, 'int64');
    assert.ok(op('patch /plants/{id}').requestBody.content['application/merge-patch+json']);
    assert.ok(op('put /plants/{id}').responses['201']);
    assert.ok(op('delete /plants/{id}').responses['204']);
    assert.equal(op('delete /plants/{id}').responses['204'].content, undefined);
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

  it('describes the three webhook events at the top level: their bodies, headers and signing', () => {
    assert.deepEqual(Object.keys(doc.webhooks).sort(), ['plant.created', 'plant.deleted', 'plant.updated']);
    for (const [event, item] of Object.entries(doc.webhooks as Record<string, Json>)) {
      const post = item.post;
      assert.match(post.description, /HMAC-SHA256/);
      assert.deepEqual(
        post.parameters.map((p: Json) => `${p.in}:${p.name}:${p.required}`),
        ['header:webhook-id:true', 'header:webhook-timestamp:true', 'header:webhook-signature:true'],
      );
      const body = resolve(doc, post.requestBody.content['application/json'].schema.$ref) as Json;
      assert.deepEqual(Object.keys(body.properties), ['type', 'timestamp', 'data'], event);
      assert.equal(body.properties.type.const, event);
      assert.ok(post.responses['2XX']);
      assert.ok(post.responses['410']);
    }
    const deleted = resolve(doc, doc.webhooks['plant.deleted'].post.requestBody.content['application/json'].schema.$ref) as Json;
    assert.deepEqual(Object.keys(deleted.properties.data.properties), ['id']);
  });

  it('documents the webhook management operations with their scope', () => {
    for (const key of [
      'post /webhooks',
      'get /webhooks',
      'get /webhooks/{id}',
      'patch /webhooks/{id}',
      'delete /webhooks/{id}',
      'post /webhooks/{id}/rotate-secret',
      'get /webhooks/{id}/deliveries',
      'post /webhooks/{id}/replay',
    ]) {
      assert.ok(op(key), key);
      assert.deepEqual(op(key).security, [{ bearerAuth: ['webhooks:manage'] }], key);
    }
    assert.ok(op('post /webhooks').responses['201'].headers.Location);
    assert.ok(op('post /webhooks/{id}/replay').responses['202']);
  });
});
