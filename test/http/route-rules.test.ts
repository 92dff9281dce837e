import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ERROR_CODES, problemType, statusOf, titleOf, type ErrorCode } from '../../src/http/error-codes.js';
import { SCOPES, type Scope } from '../../src/model/scopes.js';
import { assertErrorShape, testApp, type TestApp } from '../helpers.js';
import { anyListed, listedCodes, operations, payloadOf, urlOf, type Operation } from './route-table.js';

/**
 * The API's rules, held over every operation of the served document (made from the registered routes):
 * each refusal carries a code the document lists for that status of that operation, in the Error shape or,
 * asked for, as problem details; one unknown-field policy on every JSON body; one id rule on every path id.
 * A route added later is in the table, and so held to them, without a line here.
 */

interface Sent {
  url?: string;
  token?: string | null;
  headers?: Record<string, string>;
  /** The body as sent; the operation's example by default (none: no body). */
  body?: string | null;
}

function send(t: TestApp, operation: Operation, sent: Sent = {}): Promise<LightMyRequestResponse> {
  const body = sent.body === undefined ? payloadOf(operation) : (sent.body ?? undefined);
  const headers = { ...(body !== undefined && operation.body && { 'content-type': operation.body.type }), ...sent.headers };
  return t.call(operation.method, sent.url ?? urlOf(operation), { token: sent.token, headers, body });
}

/** A refusal: the Error shape, this code (and field), and the code among those the document lists for its status. */
function refused(operation: Operation, res: LightMyRequestResponse, code: ErrorCode, field?: string): { message: string; field?: string } {
  const what = `${operation.method} ${operation.path}: ${res.payload}`;
  assert.equal(res.statusCode, statusOf(code), what);
  assert.match(String(res.headers['content-type']), /^application\/json\b/, what);
  const body = res.json<{ message: string; code: string; field?: string }>();
  assertErrorShape(body, statusOf(code), code);
  if (field !== undefined) assert.equal(body.field, field, what);
  assert.ok(listedCodes(operation, res.statusCode).includes(code), `${what}: the document lists ${code} for ${res.statusCode}`);
  return body;
}

const other = (needed: Scope): Scope => SCOPES.find((scope) => scope !== needed)!;

describe('every operation: its refusals carry error codes it documents', async () => {
  const t = await testApp(after);
  const { operations: all } = await operations(t);
  const small = await testApp(after, { bodyLimit: 1024 });

  for (const operation of all) {
    it(`${operation.method} ${operation.path}`, async () => {
      const unknown = await send(t, operation, { url: `${urlOf(operation)}?nme=Fern` });
      const json = refused(operation, unknown, 'unknown_parameter', 'querystring.nme');
      // Asked for problem details: RFC 9457's members and the same facts, as application/problem+json.
      const problem = await send(t, operation, { url: `${urlOf(operation)}?nme=Fern`, headers: { accept: 'application/problem+json' } });
      assert.equal(problem.statusCode, 400);
      assert.match(String(problem.headers['content-type']), /^application\/problem\+json\b/);
      assert.deepEqual(problem.json(), {
        type: problemType('unknown_parameter'),
        title: titleOf('unknown_parameter'),
        status: 400,
        detail: json.message,
        code: 'unknown_parameter',
        field: 'querystring.nme',
      });

      const security = operation.op.security as Array<{ bearerAuth?: string[] }>;
      if (security.length > 0) {
        refused(operation, await send(t, operation, { token: null }), 'unauthorized');
        const scope = security[0]!.bearerAuth?.[0] as Scope | undefined;
        if (scope !== undefined) refused(operation, await send(t, operation, { token: await t.tokenWith(other(scope)) }), 'forbidden');
      }
      if (operation.body !== undefined) {
        refused(operation, await send(t, operation, { headers: { 'content-type': 'text/plain' } }), 'unsupported_media_type');
        if (operation.body.json) {
          refused(operation, await send(t, operation, { body: '{"name":' }), 'invalid_json');
        }
      }
    });
  }

  it('a body over the limit: body_too_large, wherever a JSON body goes', async () => {
    for (const operation of all.filter((o) => o.body?.json)) {
      refused(operation, await send(small, operation, { body: JSON.stringify({ padding: 'p'.repeat(2048) }) }), 'body_too_large');
    }
  });

  it('answers the Error shape unless problem details are preferred', async () => {
    const [operation] = all.filter((o) => o.path === '/plants/{id}' && o.method === 'GET');
    for (const accept of ['*/*', 'application/json', 'application/json, application/problem+json;q=0.5', 'application/problem+json;q=0']) {
      const res = await send(t, operation!, { url: '/plants/x', headers: { accept } });
      assert.match(String(res.headers['content-type']), /^application\/json\b/, accept);
    }
    for (const accept of [
      'application/problem+json',
      'application/problem+json, application/json',
      'application/json;q=0.5, application/problem+json',
    ]) {
      const res = await send(t, operation!, { url: '/plants/x', headers: { accept } });
      assert.match(String(res.headers['content-type']), /^application\/problem\+json\b/, accept);
      assert.equal(res.json<{ code: string }>().code, 'invalid_id');
    }
    // The framework's own answers too.
    const missing = await t.call('GET', '/nowhere', { headers: { accept: 'application/problem+json' } });
    assert.equal(missing.json<{ code: string; status: number }>().code, 'route_not_found');
    assert.equal(missing.json<{ status: number }>().status, 404);
  });
});

describe('every operation with a JSON body: one unknown-field policy', async () => {
  const t = await testApp(after);
  const refusing = await testApp(after, { config: { unknownFields: 'refuse' } });
  const { operations: all } = await operations(t);
  const withFields = all.filter((o) => o.body?.namedFields);
  const withUnknown = (operation: Operation) => payloadOf(operation, { ...(operation.body!.example as object), zz_colour: 'red' });
  const IGNORED = '299 - "unknown field \\"zz_colour\\" was ignored"';

  it('covers every write with a body of named fields, tokens included', () => {
    const names = withFields.map((o) => `${o.method} ${o.path}`);
    for (const name of ['POST /plants', 'PUT /plants/{id}', 'PATCH /plants/{id}', 'POST /tokens', 'POST /webhooks', 'PATCH /webhooks/{id}']) {
      assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
    }
  });

  for (const operation of withFields) {
    it(`${operation.method} ${operation.path}`, async () => {
      const prefer = (operation.op.parameters as Array<{ in: string; name: string }>).find((p) => p.in === 'header' && p.name === 'prefer');
      assert.ok(prefer, 'declares Prefer');
      const success = Object.keys(operation.op.responses).find((status) => status.startsWith('2'))!;
      assert.ok(operation.op.responses[success].headers?.Warning, `its ${success} documents Warning`);

      const strict = await send(t, operation, { body: withUnknown(operation), headers: { prefer: 'handling=strict' } });
      refused(operation, strict, 'unknown_field', 'body.zz_colour');
      assert.equal(strict.headers['preference-applied'], 'handling=strict');

      // Ignored and said, whatever else the answer is (a right-form id that names nothing is still a 404).
      const lenient = await send(t, operation, { body: withUnknown(operation) });
      assert.notEqual(anyListed(operation, lenient), 'unknown_field');
      assert.ok(([] as string[]).concat(lenient.headers.warning ?? []).includes(IGNORED), `${lenient.headers.warning}`);
      assert.equal(lenient.headers['preference-applied'], undefined);
      const asked = await send(t, operation, { body: withUnknown(operation), headers: { prefer: 'handling=lenient' } });
      assert.equal(asked.headers['preference-applied'], 'handling=lenient');
      assert.notEqual(anyListed(operation, asked), 'unknown_field');

      // UNKNOWN_FIELDS=refuse: refused by default, ignored when the request asks.
      refused(operation, await send(refusing, operation, { body: withUnknown(operation) }), 'unknown_field', 'body.zz_colour');
      const allowed = await send(refusing, operation, { body: withUnknown(operation), headers: { prefer: 'handling=lenient' } });
      assert.notEqual(anyListed(operation, allowed), 'unknown_field');
      assert.equal(allowed.headers['preference-applied'], 'handling=lenient');

      // The refusals that come before the body is read say it too, whatever their status.
      for (const [what, sent] of [
        ['401', { token: null }],
        ['415', { headers: { 'content-type': 'text/plain' } }],
        ['invalid_json', { body: '{"name":' }],
      ] as const) {
        const early = await send(t, operation, { ...sent, headers: { ...('headers' in sent ? sent.headers : {}), prefer: 'handling=strict' } });
        assert.ok(early.statusCode >= 400, `${what}: ${early.payload}`);
        assert.equal(early.headers['preference-applied'], 'handling=strict', `${what}: ${early.statusCode}`);
      }
    });
  }

  it('a streamed import: its rows alike', async () => {
    for (const operation of all.filter((o) => o.body !== undefined && o.op.requestBody.content['application/x-ndjson'])) {
      const row = '{"id":7,"name":"Fern","zz_colour":"red"}\n';
      const headers = { 'content-type': 'application/x-ndjson' };
      const strict = await send(t, operation, { body: row, headers: { ...headers, prefer: 'handling=strict' } });
      refused(operation, strict, 'unknown_field');
      assert.equal(strict.headers['preference-applied'], 'handling=strict');
      const lenient = await send(t, operation, { body: row, headers });
      assert.equal(lenient.statusCode, 200, lenient.payload);
      assert.match(String(lenient.headers.warning), /unknown field \\"zz_colour\\" was ignored in 1 row/);
    }
  });
});

describe('every operation with an id in its path: one id rule', async () => {
  const t = await testApp(after);
  const { operations: all } = await operations(t);
  // PUT creates what it names: last, so that the others meet ids that name nothing.
  const withIds = all.filter((o) => o.params.length > 0).sort((a, b) => Number(a.method === 'PUT') - Number(b.method === 'PUT'));

  it('covers plants, tokens and webhook endpoints', () => {
    const paths = new Set(withIds.map((o) => o.path));
    for (const path of ['/plants/{id}', '/tokens/{id}', '/webhooks/{id}', '/webhooks/{id}/deliveries', '/webhooks/{id}/replay'])
      assert.ok(paths.has(path), path);
  });

  for (const operation of withIds) {
    it(`${operation.method} ${operation.path}`, async () => {
      for (const { name, example } of operation.params) {
        assert.notEqual(example, '', `params.${name} has an example of its form`);
        // Past the router's longest parameter too (MAX_PARAM_LENGTH, once a 414 without the field).
        for (const wrong of ['zzz', 'ep_nope', 'x'.repeat(12), '1.5', ' ', '1'.repeat(201), `ep_${'A'.repeat(300)}`]) {
          const res = await send(t, operation, { url: urlOf(operation, { [name]: wrong }) });
          const { message } = refused(operation, res, 'invalid_id', `params.${name}`);
          assert.ok(message.startsWith(`params.${name} must be`), message);
        }
      }
      // The right form, naming nothing: 404 (a PUT makes it).
      const named = await send(t, operation);
      if (operation.method === 'PUT') assert.equal(named.statusCode, 201, named.payload);
      else refused(operation, named, 'not_found');
    });
  }
});

describe('the error codes', () => {
  it('are snake_case, each with one status and a title', () => {
    for (const [code, [status, title]] of Object.entries(ERROR_CODES)) {
      assert.match(code, /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
      assert.ok(status >= 400 && status < 600, code);
      assert.ok(title.length > 10, code);
    }
  });

  it('are each listed in docs/api.md with their status', () => {
    const page = readFileSync(fileURLToPath(new URL('../../../docs/api.md', import.meta.url)), 'utf8');
    for (const [code, [status]] of Object.entries(ERROR_CODES)) {
      assert.match(page, new RegExp(`^\\| \`${code}\` \\| ${status} \\|`, 'm'), `docs/api.md has a row for ${code}`);
    }
  });
});
