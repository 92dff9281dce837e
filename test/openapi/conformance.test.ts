import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { testApp, type CallOptions, type TestApp } from '../helpers.js';
import { until } from '../toolkit.js';
import { Conformance } from './conformance.js';
import { documentedOperations, operation, type Json } from './walk.js';

/**
 * The conformance sweep: what a contract tool (Schemathesis and the like) would do with GET /openapi.json,
 * in-process. Every operation of the document is sent valid requests (its examples, on resources that exist)
 * and invalid ones (no token, a token without its scope, a malformed or unknown id, an unknown parameter, a
 * body that is not JSON, not of its media type or not valid, a failed precondition), with the variations
 * the service answers differently (Prefer: int64=string and handling=lenient, problem details, a replayed
 * Idempotency-Key, a revalidation, a deprecated parameter name), under a rate limit so that every answer
 * carries its budget; and every answer is checked against the document (conformance.ts).
 */

/** The ids the document's path parameters take that name nothing: a 404 each. */
const UNKNOWN: Record<string, string> = { plants: '987654321', webhooks: 'ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C', tokens: '3f9a1c07b2e4' };

interface Sent {
  key: string;
  url: string;
  options: CallOptions & { method: string };
  res: LightMyRequestResponse;
}

/** Fresh resources for an operation's path: a plant, a webhook endpoint, a token, each made for it. */
async function freshIds(t: TestApp): Promise<Record<string, string>> {
  const plant = String(Math.floor(Math.random() * 1e12) + 1);
  assert.equal((await t.call('POST', '/plants', { body: { id: Number(plant), name: 'Monstera', tag: 'tropical' } })).statusCode, 200);
  const webhook = (await t.call('POST', '/webhooks', { body: { url: 'http://127.0.0.1:9/hook' } })).json<{ id: string }>().id;
  for (const id of [1, 2]) await t.call('PUT', `/plants/${id}`, { body: { name: 'Fern' } });
  await until(async () => (await t.call('GET', `/webhooks/${webhook}/deliveries?limit=1`)).headers.link, 'two deliveries');
  const token = (await t.call('POST', '/tokens', { body: { name: `sweep-${plant}`, scopes: ['plants:read'] } })).json<{ id: string }>().id;
  return { plants: plant, webhooks: webhook, tokens: token };
}

/** The path of `template` with its {id} filled: the resource of its first segment's kind. */
function fill(template: string, ids: Record<string, string>): string {
  const kind = template.split('/')[1]!;
  return template.replace('{id}', encodeURIComponent(ids[kind] ?? 'x'));
}

describe('the conformance sweep: every answer as GET /openapi.json describes it', async () => {
  // A limit no request of the sweep meets (a second app meets it), so that every answer carries its budget.
  const t = await testApp(after, { config: { rateLimitPerMinute: 1_000_000, webhookAllowPrivateNetworks: true } });
  const doc: Json = (await t.call('GET', '/openapi.json', { token: null })).json();
  const conformance = new Conformance(doc);
  const keys = documentedOperations(doc);
  // A token without the scope of an operation: one that may read events only, or (for the events) plants only.
  const eventsReader = await t.tokenWith('events:read');
  const plantsReader = await t.tokenWith('plants:read');
  const outsider = (op: Json) => (op.security?.[0]?.bearerAuth?.[0] === 'events:read' ? plantsReader : eventsReader);
  const sent: Sent[] = [];

  const send = async (key: string, url: string, options: CallOptions & { method: string }): Promise<LightMyRequestResponse> => {
    const res = await t.call(options.method as 'GET', url, options);
    sent.push({ key, url, options, res });
    return res;
  };

  /** Every request of the sweep to one operation. */
  async function sweep(key: string): Promise<void> {
    const [method, template] = key.split(' ') as [string, string];
    const op = operation(doc, key);
    const verb = method.toUpperCase();
    const example = op.requestBody?.content?.['application/json']?.example;
    const jsonBody = example !== undefined;
    const body = jsonBody && example !== null && typeof example === 'object' && !Array.isArray(example) ? { ...example } : example;
    const headerNames = new Set((op.parameters as Json[]).filter((p) => p.in === 'header').map((p) => p.name as string));
    const fresh = async () => fill(template, await freshIds(t));
    const valid = (extra: Record<string, string> = {}): CallOptions & { method: string } => ({
      method: verb,
      ...(jsonBody && { body }),
      headers: { ...(op.requestBody && !jsonBody && { 'content-type': 'application/x-ndjson' }), ...extra },
      ...(op.requestBody && !jsonBody && { body: '{"id":424242,"name":"Fern"}\n' }),
    });

    // Valid: as the document's example, then asking for int64 strings and lenient handling, then problem details.
    const url = await fresh();
    const first = await send(key, url, valid());
    if (first.headers.etag !== undefined && verb === 'GET') {
      await send(key, url, valid({ 'if-none-match': String(first.headers.etag) }));
      await send(key, url, valid({ 'if-match': '"no-such-version"' }));
    }
    const unknownField = jsonBody && typeof body === 'object' && body !== null && { body: { ...body, colour: 'green' } };
    await send(key, await fresh(), { ...valid({ prefer: 'int64=string, handling=lenient' }), ...unknownField });
    if (headerNames.has('if-match') && verb !== 'GET') await send(key, await fresh(), valid({ 'if-match': '"1"' }));
    if (headerNames.has('if-none-match') && verb !== 'GET') await send(key, await fresh(), valid({ 'if-none-match': '*' }));
    if (headerNames.has('idempotency-key')) {
      const url = await fresh();
      const options = valid({ 'idempotency-key': `sweep-${key}` });
      await send(key, url, options);
      await send(key, url, options);
      await send(key, url, { ...options, body: jsonBody ? { ...body, name: 'another' } : '{"id":434343,"name":"Other"}\n' });
    }
    // Invalid: who may call it.
    await send(key, await fresh(), { ...valid(), token: null });
    await send(key, await fresh(), { ...valid({ accept: 'application/problem+json' }), token: null });
    if (op.security?.[0]?.bearerAuth?.[0] !== undefined) await send(key, await fresh(), { ...valid(), token: outsider(op) });
    // Invalid: the request target and its headers.
    await send(key, `${await fresh()}?nme=x`, valid());
    await send(key, `${await fresh()}?nme=x`, valid({ accept: 'application/problem+json' }));
    await send(key, await fresh(), valid({ expect: 'x-fast-lane' }));
    if (template.includes('{id}')) {
      await send(key, template.replace('{id}', 'no-such-form!'), valid());
      await send(key, template.replace('{id}', '1'.repeat(300)), valid());
      await send(key, fill(template, UNKNOWN), valid());
    }
    for (const parameter of (op.parameters as Json[]).filter((p) => p.in === 'query')) {
      await send(key, `${await fresh()}?${parameter.name as string}=no-such-form!`, valid());
      await send(key, `${await fresh()}?${parameter.name as string}=-1`, valid());
    }
    for (const name of headerNames) await send(key, await fresh(), valid({ [name]: 'no-such-form!' }));
    // Invalid: the body.
    if (op.requestBody !== undefined || verb === 'DELETE') {
      await send(key, await fresh(), { method: verb, body: '{"name":', headers: { 'content-type': 'application/json' } });
      await send(key, await fresh(), { method: verb, body: 'x', headers: { 'content-type': 'text/plain' } });
      await send(key, await fresh(), { method: verb, body: `"${'x'.repeat(70_000)}"`, headers: { 'content-type': 'application/json' } });
    }
    if (jsonBody) {
      await send(key, await fresh(), { method: verb, body: {} });
      await send(key, await fresh(), { method: verb, body: [] });
      await send(key, await fresh(), { ...valid({ prefer: 'handling=strict' }), body: { ...body, colour: 'green' } });
    }
  }

  for (const key of keys) await sweep(key);
  // What only some operations take: the formats of a list, its total, a batch read, a deprecated name.
  await send('get /plants', '/plants', { method: 'GET', headers: { accept: 'text/csv' } });
  await send('get /plants', '/plants', { method: 'GET', headers: { accept: 'application/x-ndjson', prefer: 'int64=string' } });
  await send('get /plants', '/plants?limit=1', { method: 'GET', headers: { prefer: 'count=exact, int64=string' } });
  await send('get /plants', '/plants?id=1&id=987654321', { method: 'GET' });
  await send('get /', '/', { method: 'GET', token: null, headers: { accept: 'text/html' } });
  await send('get /tokens', '/tokens?state=active', { method: 'GET' });
  await send('get /tokens', '/tokens?state=active&status=active', { method: 'GET' });
  await send('get /tokens', '/tokens?state=nonsense', { method: 'GET', token: null });
  await send('get /events', '/events?limit=1', { method: 'GET', headers: { prefer: 'int64=string' } });
  // A page with a next one, revalidated: its 304 and its 412.
  const webhook = (await t.call('POST', '/webhooks', { body: { url: 'http://127.0.0.1:9/hook' } })).json<{ id: string }>().id;
  for (const id of [1, 2]) await t.call('PUT', `/plants/${id}`, { body: { name: 'Fern' } });
  await until(async () => (await t.call('GET', `/webhooks/${webhook}/deliveries?limit=1`)).headers.link, 'two deliveries');
  for (const [key, url] of [
    ['get /plants', '/plants?limit=1'],
    ['get /webhooks', '/webhooks?limit=1'],
    ['get /tokens', '/tokens?limit=1'],
    ['get /events', '/events?limit=1'],
    ['get /webhooks/{id}/deliveries', `/webhooks/${webhook}/deliveries?limit=1`],
  ] as const) {
    const page = await send(key, url, { method: 'GET' });
    assert.ok(page.headers.link, `${url} has a next page`);
    await send(key, url, { method: 'GET', headers: { 'if-none-match': String(page.headers.etag) } });
    await send(key, url, { method: 'GET', headers: { 'if-match': '"no-such-version"' } });
  }

  it('sent every operation valid and invalid requests', () => {
    for (const key of keys) {
      const statuses = sent.filter((s) => s.key === key).map((s) => s.res.statusCode);
      assert.ok(
        statuses.some((s) => s < 400),
        `${key}: a success among ${statuses.join(',')}`,
      );
      assert.ok(
        statuses.some((s) => s >= 400),
        `${key}: an error among ${statuses.join(',')}`,
      );
    }
  });

  it('an operation the document secures refuses a request without a token (401), and one without its scope (403)', () => {
    for (const key of keys) {
      const security = operation(doc, key).security as Json[];
      if (security.length === 0) continue;
      const anonymous = sent.filter((s) => s.key === key && s.options.token === null).map((s) => s.res.statusCode);
      assert.ok(anonymous.length > 0 && anonymous.every((status) => status === 401), `${key}: ${anonymous.join(',')}`);
      if (security[0].bearerAuth[0] === undefined) continue;
      const unscoped = sent.filter((s) => s.key === key && s.options.token === outsider(operation(doc, key))).map((s) => s.res.statusCode);
      assert.ok(unscoped.length > 0 && unscoped.every((status) => status === 403), `${key}: ${unscoped.join(',')}`);
    }
  });

  it('every answer is one the document declares: its status, its body, its headers', () => {
    const found = sent.flatMap(({ key, url, options, res }) =>
      conformance.problems(key, res).map((problem) => `${options.method} ${url} ${JSON.stringify(options.headers ?? {})}: ${problem}`),
    );
    assert.deepEqual(found, []);
  });

  it('a 429 and its budget, as the document declares them', async () => {
    const limited = await testApp(after, { config: { rateLimitPerMinute: 2 } });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await limited.call('GET', '/plants/1'));
    assert.equal(answers.at(-1)!.statusCode, 429);
    for (const res of answers) assert.deepEqual(conformance.problems('get /plants/{id}', res), []);
  });
});
