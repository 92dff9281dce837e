import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { int64AsStrings } from '../../src/json/int64-strings.js';
import { assertError, testApp } from '../helpers.js';
import { until } from '../toolkit.js';
import { listen, rawStream } from '../events/sse.js';

/** Beyond 2^53: JSON.parse would read it as 9007199254740992. */
const BIG = '9007199254740993';
const PREFER = { prefer: 'int64=string' };

describe('int64AsStrings', () => {
  const ids = new Set(['id', 'plantId']);
  const cases: Array<[string, string]> = [
    ['{"id":1,"name":"Fern"}', '{"id":"1","name":"Fern"}'],
    [`[{"id":${BIG}},{"id":-9223372036854775808}]`, `[{"id":"${BIG}"},{"id":"-9223372036854775808"}]`],
    ['{"id" : 7 ,"plantId":\n8}', '{"id" : "7" ,"plantId":\n"8"}'],
    // An event's own id is a string already; its plant's is written so.
    ['{"id":"msg_01","type":"plant.created","data":{"id":5,"name":"x"}}', '{"id":"msg_01","type":"plant.created","data":{"id":"5","name":"x"}}'],
    // A string that spells a member is text, not a member.
    ['{"name":"\\"id\\":5","tag":"id"}', '{"name":"\\"id\\":5","tag":"id"}'],
    ['{"name":"a\\\\","id":6}', '{"name":"a\\\\","id":"6"}'],
    // Other members, and values that are not integers, are left.
    ['{"error":404,"attempts":3,"lastStatus":500}', '{"error":404,"attempts":3,"lastStatus":500}'],
    ['{"id":1.5,"plantId":null,"x":{"id":true}}', '{"id":1.5,"plantId":null,"x":{"id":true}}'],
    ['[]', '[]'],
  ];
  for (const [text, expected] of cases) {
    test(text, () => {
      assert.equal(int64AsStrings(text, ids), expected);
      assert.deepEqual(Object.keys(JSON.parse(int64AsStrings(text, ids)) as object), Object.keys(JSON.parse(text) as object));
    });
  }
});

interface Schema {
  $ref?: string;
  format?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
}
interface OpenApiDoc {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>;
  components: { schemas: Record<string, Schema> };
}

/** Whether a schema of the document holds an int64 member anywhere. */
function holdsInt64(doc: OpenApiDoc, schema: Schema | undefined, seen = new Set<string>()): boolean {
  if (schema === undefined) return false;
  if (schema.$ref !== undefined) {
    if (seen.has(schema.$ref)) return false;
    seen.add(schema.$ref);
    return holdsInt64(doc, doc.components.schemas[schema.$ref.split('/').at(-1)!], seen);
  }
  const parts = [...Object.values(schema.properties ?? {}), schema.items, ...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])];
  return Object.values(schema.properties ?? {}).some((member) => member.format === 'int64') || parts.some((part) => holdsInt64(doc, part, seen));
}

/** Preference-Applied says int64=string; an answer that holds int64 values varies by Prefer. */
function assertApplied(response: LightMyRequestResponse, holdsInt64 = true): void {
  assert.match(String(response.headers['preference-applied']), /(^|, )int64=string($|,)/, `${response.statusCode} ${response.payload}`);
  if (holdsInt64) assert.match(String(response.headers.vary), /\bPrefer\b/);
}

/**
 * Prefer: int64=string writes every int64 member of every answer that has some as a string, on every
 * operation whose answer the OpenAPI document says holds one (so a new one cannot skip it); a body may send
 * them as strings then. Without it, nothing changes: the specified contract.
 */
describe('Prefer: int64=string', async () => {
  const t = await testApp(after, { config: { webhookAllowPrivateNetworks: true } });
  const doc = (await t.call('GET', '/openapi.json', { token: null })).json<OpenApiDoc>();
  const withInt64 = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) =>
        Object.entries(op.responses ?? {}).some(
          ([status, answer]) => status.startsWith('2') && holdsInt64(doc, answer.content?.['application/json']?.schema),
        ),
      )
      .map(([method]) => `${method.toUpperCase()} ${path}`),
  );

  // One plant beyond 2^53, an endpoint and its delivery, an event of each kind.
  const endpoint = (await t.call('POST', '/webhooks', { body: { url: 'http://127.0.0.1:9/hook' } })).json<{ id: string }>().id;
  assert.equal((await t.call('POST', '/plants', { body: `{"id":${BIG},"name":"Fern"}` })).statusCode, 200);

  /** Each operation whose answer holds int64 values, called with the preference: the answer, with its ids as strings. */
  const calls: Record<string, () => Promise<LightMyRequestResponse>> = {
    'GET /plants': () => t.call('GET', '/plants', { headers: PREFER }),
    'GET /plants/{id}': () => t.call('GET', `/plants/${BIG}`, { headers: PREFER }),
    'PUT /plants/{id}': () => t.call('PUT', `/plants/${BIG}`, { body: { name: 'Fern', tag: 'green' }, headers: PREFER }),
    'PATCH /plants/{id}': () => t.call('PATCH', `/plants/${BIG}`, { body: { tag: 'shade' }, headers: PREFER }),
    'GET /events': () => t.call('GET', '/events', { headers: PREFER }),
    'GET /webhooks/{id}/deliveries': () => t.call('GET', `/webhooks/${endpoint}/deliveries`, { headers: PREFER }),
  };

  test('the operations whose answers hold int64 values, by the document', () => {
    assert.deepEqual(withInt64.sort(), Object.keys(calls).sort());
  });

  for (const [operation, call] of Object.entries(calls)) {
    test(`${operation}: every int64 value a string, exact; others as they were`, async () => {
      const response = await call();
      assert.ok(response.statusCode < 300, `${response.statusCode} ${response.payload}`);
      assertApplied(response);
      assert.ok(response.payload.includes(`"${BIG}"`), response.payload);
      assert.doesNotMatch(response.payload, /"(id|plantId)":-?\d/, 'no int64 member left a number');
      const plain = await t.call('GET', '/plants');
      assert.match(plain.payload, new RegExp(`"id":${BIG}\\b`), 'without the preference: JSON integers, as specified');
      assert.equal(plain.headers['preference-applied'], undefined);
      assert.match(String(plain.headers.vary), /\bPrefer\b/, 'the answer depends on Prefer');
    });
  }

  test('GET /plants/{id} without the preference is as specified: the integer, no Preference-Applied', async () => {
    const response = await t.call('GET', `/plants/${BIG}`);
    assert.equal(response.payload.slice(0, 7 + BIG.length), `{"id":${BIG},`);
    assert.equal(response.headers['preference-applied'], undefined);
  });

  test('an event stream writes its plant ids as strings when asked, as integers otherwise', async () => {
    const origin = await listen(t.app);
    const token = await t.tokenWith('events:read');
    const asked = await rawStream(`${origin}/events?after=msg_00000000000000000000000000`, { authorization: `Bearer ${token}`, ...PREFER });
    const plain = await rawStream(`${origin}/events?after=msg_00000000000000000000000000`, { authorization: `Bearer ${token}` });
    try {
      assert.equal(asked.headers.get('preference-applied'), 'int64=string');
      assert.equal(plain.headers.get('preference-applied'), null);
      await until(() => asked.text().includes('plant.updated') && plain.text().includes('plant.updated'), 'the events on both streams');
      assert.ok(asked.text().includes(`"data":{"id":"${BIG}"`), asked.text());
      assert.ok(plain.text().includes(`"data":{"id":${BIG},`), plain.text());
      // A new event reaches both, each in its form (the broadcast keeps one chunk per form).
      await t.call('DELETE', `/plants/${BIG}`);
      await until(() => asked.text().includes('plant.deleted') && plain.text().includes('plant.deleted'), 'the delete on both streams');
      assert.ok(asked.text().includes(`"data":{"id":"${BIG}"}`), asked.text());
      assert.ok(plain.text().includes(`"data":{"id":${BIG}}`), plain.text());
    } finally {
      asked.abort();
      plain.abort();
    }
  });

  test('a body may send its id as a string then; without the preference that is 400, as specified', async () => {
    const id = '9007199254740995';
    const sent = await t.call('POST', '/plants', { body: `{"id":"${id}","name":"Ivy"}`, headers: PREFER });
    assert.equal(sent.statusCode, 200, sent.payload);
    assert.equal(sent.payload, '{"name":"Ivy"}', 'the specified Plant: no id');
    assertApplied(sent, false);
    assert.match((await t.call('GET', `/plants/${id}`)).payload, new RegExp(`"id":${id},`));
    assertError(await t.call('POST', '/plants', { body: `{"id":"${id}","name":"Ivy"}` }), 400, 'body.id must be an integer');
    const put = await t.call('PUT', `/plants/${id}`, { body: `{"id":"${id}","name":"Ivy 2"}`, headers: PREFER });
    assert.equal(put.statusCode, 200, put.payload);
    assert.equal(put.payload, `{"id":"${id}","name":"Ivy 2"}`);
    const patch = await t.call('PATCH', `/plants/${id}`, { body: `{"id":"${id}","tag":"x"}`, headers: PREFER });
    assert.equal(patch.statusCode, 200, patch.payload);
    // Both forms are taken; a string must spell an int64 in plain decimal.
    assert.equal((await t.call('POST', '/plants', { body: '{"id":12,"name":"Moss"}', headers: PREFER })).statusCode, 200);
    for (const bad of ['"012"', '"+12"', '"1e3"', '" 12"', '"9223372036854775808"', '""']) {
      assertError(await t.call('POST', '/plants', { body: `{"id":${bad},"name":"Moss"}`, headers: PREFER }), 400, 'body.id');
    }
  });

  test('beside other preferences: each applied is said', async () => {
    const response = await t.call('POST', '/plants', { body: '{"id":"13","name":"Moss"}', headers: { prefer: 'handling=strict, int64=string' } });
    assert.equal(response.statusCode, 200, response.payload);
    assert.deepEqual(String(response.headers['preference-applied']).split(', ').sort(), ['handling=strict', 'int64=string']);
    const other = await t.call('GET', `/plants/13`, { headers: { prefer: 'int64=number' } });
    assert.equal(other.payload, '{"id":13,"name":"Moss"}', 'another value is left aside');
    assert.equal(other.headers['preference-applied'], undefined);
  });
});
