import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { SCOPES } from '../../src/model/scopes.js';
import { statusOf, type ErrorCode } from '../../src/http/error-codes.js';
import { assertErrorShape, testApp } from '../helpers.js';
import { responseOf, type Json } from './walk.js';

/**
 * The OpenAPI document as a teacher: its description says how to get and send a token, every error
 * answer shows real messages, and its Markdown renders (no `<` left outside a code span for /docs to take
 * for HTML). The examples are checked against what the service really answers.
 */

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const WEBHOOK_ID = 'ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C';
const TOKEN_ID = '3f9a1c07b2e4';

interface Operation {
  method: InjectOptions['method'] & string;
  path: string;
  url: string;
  op: Json;
}

/**
 * The answers an error status of an operation shows as its examples, as `code: message`; each example in the
 * Error shape, its code among the status's x-error-codes, and the same facts as problem details.
 */
function examples(doc: Json, op: Json, status: string): string[] {
  const response = responseOf(doc, op, status);
  const content = response?.content?.['application/json'];
  if (!content) return [];
  const values: Json[] = content.example ? [content.example] : Object.values(content.examples ?? {}).map((e: Json) => e.value);
  const problems: Json[] = Object.values(response.content['application/problem+json']?.examples ?? {}).map((e: Json) => e.value);
  // Node's parser's refusals are written before any Accept is read: the Error shape only.
  const parsers = ['408', '414', '431'];
  assert.equal(problems.length, parsers.includes(status) ? 0 : values.length, `problem details for each example of ${status}`);
  values.forEach((value, i) => {
    assertErrorShape(value, status === 'default' ? statusOf(value.code as ErrorCode) : Number(status));
    if (status !== 'default') assert.ok((response['x-error-codes'] as string[]).includes(value.code), `${status}: ${value.code} is listed`);
    if (parsers.includes(status)) return;
    const problem = problems[i]!;
    assert.deepEqual([problem.status, problem.detail, problem.code, problem.field], [value.error, value.message, value.code, value.field]);
    assert.equal(problem.type, `tag:plant-store,2026:problem:${value.code}`);
  });
  return values.map((value) => `${value.code}: ${value.message}`);
}

/** Every description in the document (info, tags, operations, parameters, headers, schemas…), with where. */
function descriptions(node: Json, where = '#'): Array<[string, string]> {
  if (Array.isArray(node)) return node.flatMap((item, i) => descriptions(item, `${where}/${i}`));
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === 'description' && typeof value === 'string' ? [[value, where] as [string, string]] : descriptions(value, `${where}/${key}`),
  );
}

describe('the OpenAPI document teaches', async () => {
  const t = await testApp(after, { config: { overloadEventLoopDelayMs: 0 } });
  const doc: Json = (await t.call('GET', '/openapi.json', { token: null })).json();
  const operations: Operation[] = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((m) => METHODS.includes(m))
      .map((m) => ({
        method: m.toUpperCase() as Operation['method'],
        path,
        url: path.replace('{id}', path.startsWith('/webhooks') ? WEBHOOK_ID : path.startsWith('/tokens') ? TOKEN_ID : '1'),
        op: item[m],
      })),
  );

  it('says what the service is, and how to get a token and send it', () => {
    const text: string = doc.info.description;
    assert.match(text, /plant store's plants behind a JSON-over-HTTP API/);
    assert.match(text, /first start/i);
    assert.match(text, /npx plant-store token create --name reporting --scope plants:read/);
    assert.match(text, /DATABASE_URL/);
    assert.match(text, /`Authorization: Bearer <token>`/);
    assert.match(text, /Authorize/);
    assert.doesNotMatch(text, /sample API/);
  });

  it("names every scope a token can have, events:read included, and each is some operation's", () => {
    const text: string = doc.info.description;
    const named = [...text.matchAll(/`([a-z]+:[a-z]+)`/g)].map((match) => match[1]);
    for (const scope of SCOPES) assert.ok(named.includes(scope), `${scope} is named`);
    const used = new Set<string>();
    const paths: Record<string, Json> = doc.paths;
    for (const item of Object.values(paths))
      for (const method of METHODS) {
        const security: Array<Record<string, string[]>> = item[method]?.security ?? [];
        for (const requirement of security) for (const scopes of Object.values(requirement)) for (const s of scopes) used.add(s);
      }
    assert.deepEqual([...used].sort(), [...SCOPES].sort());
  });

  it('every description renders: no < outside a code span or code block', () => {
    const all = descriptions(doc);
    assert.ok(all.length > 100, `${all.length} descriptions`);
    for (const [text, where] of all) {
      const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
      assert.doesNotMatch(prose, /</, `${where}: ${text}`);
    }
    // The ETag's form is shown whole, in a code span.
    assert.match(doc.paths['/plants/{id}'].get.responses['200'].headers.ETag.description, /`"<version>"`/);
  });

  it('has no Accept, Content-Type or Authorization parameter (OpenAPI ignores them; /docs has selectors of its own)', () => {
    for (const { method, path, op } of operations) {
      for (const parameter of op.parameters ?? []) {
        assert.ok(
          !(parameter.in === 'header' && ['accept', 'content-type', 'authorization'].includes(parameter.name.toLowerCase())),
          `${method} ${path}: ${parameter.name}`,
        );
      }
    }
  });

  it('every error answer of every operation has an example, in the Error shape, with its status', () => {
    for (const { method, path, op } of operations) {
      for (const status of Object.keys(op.responses)) {
        if (status !== 'default' && Number(status) < 400) continue;
        assert.ok(examples(doc, op, status).length > 0, `${method} ${path} ${status}`);
      }
    }
    assert.deepEqual(doc.paths['/plants/{id}'].get.responses['404'].content['application/json'].examples.not_found.value, {
      error: 404,
      message: 'no plant with id 1',
      code: 'not_found',
    });
  });

  it("shows every operation's 400, 429 and 503 (but the probes' 429, and /healthz's 503)", () => {
    for (const { method, path, op } of operations) {
      assert.ok(op.responses['400'], `${method} ${path} 400`);
      assert.equal(Boolean(op.responses['429']), !['/healthz', '/readyz'].includes(path), `${method} ${path} 429`);
      assert.equal(Boolean(op.responses['503']), path !== '/healthz', `${method} ${path} 503`);
    }
  });

  it('the examples of 400 (an unknown query parameter), 401, 403, 404 and 415 are what the service answers', async () => {
    const reader = await t.tokenWith('plants:read');
    for (const { method, url, path, op } of operations) {
      const send = async (options: { token?: string | null; headers?: Record<string, string>; body?: string; query?: string } = {}) => {
        const { code, message } = (await t.call(method, `${url}${options.query ?? ''}`, options)).json();
        return `${code as string}: ${message as string}`;
      };
      // An operation with a body also names what is wrong with the (missing) body; the example is the query's part.
      const unknown = 'unknown_parameter: unknown query parameter "nme"';
      assert.ok(examples(doc, op, '400').includes(unknown), `${method} ${path} 400`);
      assert.ok((await send({ query: '?nme=Fern' })).startsWith(unknown), `${method} ${path} 400`);
      if (op.security.length === 0) continue;
      assert.deepEqual(examples(doc, op, '401'), [await send({ token: null })], `${method} ${path} 401`);
      const scope = op.security[0].bearerAuth[0];
      // GET /token takes any token (no scope to lack: no 403).
      // POST /tokens shows its other 403 too (a scope it may not grant), as routes show their own 404s and 409s.
      if (scope !== undefined && scope !== 'plants:read')
        assert.ok(examples(doc, op, '403').includes(await send({ token: reader })), `${method} ${path} 403`);
      if (op.requestBody) {
        assert.deepEqual(examples(doc, op, '415'), [await send({ body: 'x', headers: { 'content-type': 'text/plain' } })], `${method} ${path} 415`);
      }
      if (op.responses['404']) {
        // A body that passes, so that the id is looked up.
        const body = op.requestBody ? (path.endsWith('/replay') ? '{"since": "2026-01-01T00:00:00Z"}' : '{}') : undefined;
        const type = op.requestBody ? Object.keys(op.requestBody.content)[0] : undefined;
        // The first example is the id no one has; a route may show other 404s after it (a token revoked already).
        assert.equal(examples(doc, op, '404')[0], await send({ body, headers: type ? { 'content-type': type } : {} }), `${method} ${path} 404`);
      }
    }
  });

  it('the 415 of an import names every media type it takes', () => {
    assert.deepEqual(examples(doc, doc.paths['/plants/import'].post, '415'), [
      'unsupported_media_type: unsupported media type "text/plain": send the body as application/x-ndjson, application/json or text/csv',
    ]);
  });

  it("the examples of the routes' own errors are what the service answers, with their codes", async () => {
    const strict = { prefer: 'handling=strict' };
    assert.equal((await t.call('POST', '/plants', { body: { id: 1, name: 'Monstera' } })).statusCode, 200);
    const cases: Array<[string, string, string, () => Promise<string>]> = [
      ['post /plants', '400', 'body.name must not be empty', () => message('POST', '/plants', { body: { id: 2, name: '' } })],
      ['post /plants', '400', 'body.id must be an integer', () => message('POST', '/plants', { body: { id: '2', name: 'x' } })],
      ['post /plants', '412', 'exists', () => message('POST', '/plants', { body: { id: 1, name: 'x' }, headers: { 'if-none-match': '*' } })],
      ['post /plants', '412', 'If-Match', () => message('POST', '/plants', { body: { id: 1, name: 'x' }, headers: { 'if-match': '"7"' } })],
      ['get /plants', '400', '', () => message('GET', '/plants?limit=1001')],
      ['get /plants/{id}', '400', '', () => message('GET', '/plants/abc')],
      ['put /plants/{id}', '400', 'required', () => message('PUT', '/plants/1', { body: {} })],
      ['put /plants/{id}', '400', 'match', () => message('PUT', '/plants/1', { body: { id: 2, name: 'x' } })],
      ['patch /plants/{id}', '400', '', () => message('PATCH', '/plants/1', { body: { tag: 5 } })],
      ['patch /plants/{id}', '412', '', () => message('PATCH', '/plants/1', { body: {}, headers: { 'if-match': '"7"' } })],
      ['delete /plants/{id}', '412', '', () => message('DELETE', '/plants/1', { headers: { 'if-match': '"7"' } })],
      ['post /plants/import', '400', 'line', () => importing('{"id":1,"name":"a"}\n{"id":2}', 'application/x-ndjson')],
      ['post /plants/import', '400', 'element', () => importing('[{"id":"x","name":"a"}]', 'application/json')],
      ['post /plants/import', '409', '', () => importing('{"id":1,"name":"a"}', 'application/x-ndjson', '?mode=create-only')],
      ['post /webhooks', '400', 'events', () => message('POST', '/webhooks', { body: { url: 'https://93.184.215.14/x', events: [] } })],
      ['post /webhooks', '400', 'url', () => message('POST', '/webhooks', { body: { url: 'ftp://x' } })],
      ['get /webhooks', '400', '', () => message('GET', '/webhooks?limit=1001')],
      ['patch /webhooks/{id}', '400', '', () => message('PATCH', `/webhooks/${WEBHOOK_ID}`, { body: { enabled: 'yes' } })],
      ['get /webhooks/{id}/deliveries', '400', '', () => message('GET', `/webhooks/${WEBHOOK_ID}/deliveries?status=lost`)],
      ['post /webhooks/{id}/replay', '400', '', () => replayBackwards()],
      ['get /tokens', '400', 'after', () => message('GET', '/tokens?after=nobody')],
      ['post /tokens', '400', 'empty', () => message('POST', '/tokens', { body: { name: 'x', scopes: [] } })],
      ['post /tokens', '400', 'name', () => message('POST', '/tokens', { body: { name: 'n'.repeat(65), scopes: ['plants:read'] } })],
      [
        'post /tokens',
        '400',
        'unknown field',
        () => message('POST', '/tokens', { body: { name: 'x', scopes: ['plants:read'], colour: 1 }, headers: strict }),
      ],
      ['post /tokens', '403', 'grant', () => granting()],
      ['post /tokens', '409', 'named', () => namedTwice()],
      ['get /tokens/{id}', '404', 'static', () => message('GET', '/tokens/static:0a1b2c3d4e5f')],
      ['delete /tokens/{id}', '404', 'revoked', () => revokedTwice()],
      ['delete /tokens/{id}', '409', '', () => revokingItself()],
    ];
    function said(res: { json(): Json }): string {
      const { code, message } = res.json();
      return `${code as string}: ${message as string}`;
    }
    async function message(method: Operation['method'], url: string, options: { body?: unknown; headers?: Record<string, string> } = {}) {
      const res = await t.call(method, url, {
        ...options,
        headers: { ...(method === 'PATCH' && { 'content-type': 'application/merge-patch+json' }), ...options.headers },
      });
      return said(res);
    }
    async function importing(body: string, type: string, query = '') {
      return message('POST', `/plants/import${query}`, { body, headers: { 'content-type': type } });
    }
    async function replayBackwards() {
      const created = await t.call('POST', '/webhooks', { body: { url: 'https://93.184.215.14/x' } });
      const res = await t.call('POST', `/webhooks/${created.json().id}/replay`, {
        body: { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' },
      });
      return said(res);
    }
    /** A token that may make tokens and read plants, asking for webhooks:manage and events:read too. */
    async function granting() {
      const maker = await t.tokenWith('tokens:manage', 'plants:read');
      const body = { name: 'climber', scopes: ['plants:read', 'webhooks:manage', 'events:read'] };
      return said(await t.call('POST', '/tokens', { body, token: maker }));
    }
    async function namedTwice() {
      assert.equal((await t.call('POST', '/tokens', { body: { name: 'reporting', scopes: ['plants:read'] } })).statusCode, 201);
      return message('POST', '/tokens', { body: { name: 'reporting', scopes: ['plants:read'] } });
    }
    async function revokedTwice() {
      const { id } = (await t.call('POST', '/tokens', { body: { name: 'once', scopes: ['plants:read'] } })).json();
      assert.equal((await t.call('DELETE', `/tokens/${id}`)).statusCode, 204);
      // The example's id and time are made up: compare the message with those put in.
      const { revokedAt } = (await t.call('GET', `/tokens/${id}`)).json();
      return (await message('DELETE', `/tokens/${id}`)).replace(id, TOKEN_ID).replace(revokedAt, '2026-01-31T12:00:00.000Z');
    }
    async function revokingItself() {
      const { id, secret } = (await t.call('POST', '/tokens', { body: { name: 'itself', scopes: ['tokens:manage'] } })).json();
      const res = await t.call('DELETE', `/tokens/${id}`, { token: secret });
      return said(res).replaceAll(id, TOKEN_ID);
    }
    for (const [key, status, mentions, send] of cases) {
      const [method, path] = key.split(' ');
      const shown = examples(doc, doc.paths[path!][method!], status).filter((e) => e.includes(mentions));
      const answered = await send();
      assert.ok(shown.includes(answered), `${key} ${status}: the service answered "${answered}", the document shows ${JSON.stringify(shown)}`);
    }
  });
});
