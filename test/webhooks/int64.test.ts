import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { int64Names } from '../../src/http/int64-preference.js';
import { EVENT_INT64_MEMBERS } from '../../src/model/events.js';
import { WEBHOOK_EVENTS } from '../../src/webhooks/events-doc.js';
import { assertError, testApp } from '../helpers.js';
import { until } from '../toolkit.js';
import { webhookHarness } from './harness.js';
import type { Received } from './receiver.js';

/**
 * An endpoint's `int64` setting: `"string"` makes its delivery bodies write int64 values (the plant's
 * `data.id`) as JSON strings, signed over those bytes; `"number"`, the default, leaves them as they always
 * were. Runs on SQLite, and on PostgreSQL by test/store/postgres/http.process.test.ts.
 */

/** Beyond 2^53: JSON.parse would read it as 9007199254740992. */
const BIG = '9007199254740993';
const MIN = '-9223372036854775808';
const ISO = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';

/** Verifies a delivery with the standardwebhooks package (not ours) over the bytes received; its body parsed as is. */
function verified(secret: string, delivery: Received): { type: string; timestamp: string; data: Record<string, unknown> } {
  const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(delivery.headers[name])]));
  return new Webhook(secret).verify(delivery.body, headers) as { type: string; timestamp: string; data: Record<string, unknown> };
}

/** In the order of their JSON text. */
function sorted<T>(values: T[]): T[] {
  return values.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

describe("an endpoint's int64 setting over HTTP", async () => {
  const t = await testApp(after);
  const url = 'https://93.184.215.14/plants-hook';

  it('is left out of an endpoint that writes numbers (the default, the answers as before), and shown when it writes strings', async () => {
    const plain = await t.call('POST', '/webhooks', { body: { url } });
    assert.equal(plain.statusCode, 201, plain.payload);
    assert.deepEqual(Object.keys(plain.json()).sort(), ['createdAt', 'enabled', 'events', 'id', 'secret', 'url']);
    const number = await t.call('POST', '/webhooks', { body: { url, int64: 'number' } });
    assert.equal(number.statusCode, 201, number.payload);
    assert.equal(number.json().int64, undefined, '"number" is the default: not shown');

    const strings = await t.call('POST', '/webhooks', { body: { url, int64: 'string', description: 'a browser app' } });
    assert.equal(strings.statusCode, 201, strings.payload);
    const made = strings.json();
    assert.equal(made.int64, 'string');
    assert.deepEqual(Object.keys(made).sort(), ['createdAt', 'description', 'enabled', 'events', 'id', 'int64', 'secret', 'url']);
    const { secret: _secret, ...stored } = made;
    assert.deepEqual((await t.call('GET', `/webhooks/${made.id}`)).json(), stored);
    const listed = (await t.call('GET', '/webhooks?limit=1000')).json<Array<{ id: string; int64?: string }>>();
    assert.deepEqual(
      listed.map((e) => [e.id, e.int64]),
      [
        [plain.json().id, undefined],
        [number.json().id, undefined],
        [made.id, 'string'],
      ],
    );
  });

  it('PATCH sets it and sets it back; a PATCH without it keeps it', async () => {
    const { id } = (await t.call('POST', '/webhooks', { body: { url } })).json<{ id: string }>();
    const set = await t.call('PATCH', `/webhooks/${id}`, { body: { int64: 'string' } });
    assert.equal(set.statusCode, 200, set.payload);
    assert.equal(set.json().int64, 'string');
    assert.equal((await t.call('GET', `/webhooks/${id}`)).json().int64, 'string');
    const other = await t.call('PATCH', `/webhooks/${id}`, { body: { description: 'kept', enabled: false } });
    assert.equal(other.json().int64, 'string', 'another change keeps it');
    assert.equal((await t.call('PATCH', `/webhooks/${id}`, { body: {} })).json().int64, 'string');
    const back = await t.call('PATCH', `/webhooks/${id}`, { body: { int64: 'number' } });
    assert.equal(back.statusCode, 200);
    assert.equal(back.json().int64, undefined);
    assert.equal((await t.call('GET', `/webhooks/${id}`)).json().int64, undefined);
    assert.equal((await t.call('PATCH', `/webhooks/${id}`, { body: { int64: 'number' } })).json().int64, undefined, 'idempotent');
  });

  describe('a value other than "number" or "string" is 400 validation_failed naming body.int64, and changes nothing', () => {
    const bad: unknown[] = ['bigint', 'STRING', 'String', ' string', '', 'int64=string', 1, 0, true, null, ['string'], { form: 'string' }];
    for (const value of bad) {
      it(`${JSON.stringify(value)}`, async () => {
        const created = await t.call('POST', '/webhooks', { body: { url, int64: value } });
        assertError(created, 400, 'body.int64', 'validation_failed');
        assert.equal(created.json().field, 'body.int64');
        const { id } = (await t.call('POST', '/webhooks', { body: { url, int64: 'string' } })).json<{ id: string }>();
        const patched = await t.call('PATCH', `/webhooks/${id}`, { body: { int64: value, description: 'not this either' } });
        assertError(patched, 400, 'body.int64', 'validation_failed');
        assert.equal(patched.json().field, 'body.int64');
        const after = (await t.call('GET', `/webhooks/${id}`)).json();
        assert.equal(after.int64, 'string');
        assert.equal(after.description, undefined);
      });
    }
  });

  it('a keyed POST answers its retry with the same bytes, the setting included', async () => {
    const headers = { 'idempotency-key': `int64-${Date.now()}` };
    const first = await t.call('POST', '/webhooks', { body: { url, int64: 'string' }, headers });
    const again = await t.call('POST', '/webhooks', { body: { url, int64: 'string' }, headers });
    assert.equal(first.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.payload, first.payload);
    assert.equal(again.json().int64, 'string');
  });

  it("the bodies' int64 members are the ones the event schemas mark format: int64", () => {
    const fromSchemas = new Set(Object.values(WEBHOOK_EVENTS).flatMap(({ body }) => [...int64Names(body)]));
    assert.deepEqual([...EVENT_INT64_MEMBERS].sort(), [...fromSchemas].sort());
  });
});

describe('deliveries to an endpoint that asks for int64 strings', () => {
  it('carry every plant id as a JSON string, exact beyond 2^53, signed over the bytes sent; a default endpoint gets the very bytes it always got', async () => {
    const { t, receiver, register } = await webhookHarness(after);
    const strings = await register({ int64: 'string' });
    const numbers = await register();
    assert.equal((await t.call('POST', '/plants', { body: `{"id":${BIG},"name":"Monstera \\"id\\":1","tag":"id"}` })).statusCode, 200);
    assert.equal((await t.call('PATCH', `/plants/${BIG}`, { body: { tag: 'big' } })).statusCode, 200);
    assert.equal((await t.call('DELETE', `/plants/${BIG}`)).statusCode, 204);
    assert.equal((await t.call('POST', '/plants', { body: `{"id":${MIN},"name":"Min"}` })).statusCode, 200);
    const deliveries = await receiver.waitFor(8);
    const bySecret = (secret: string) =>
      deliveries
        .filter((d) => {
          try {
            verified(secret, d);
            return true;
          } catch {
            return false;
          }
        })
        .sort((a, b) => a.body.localeCompare(b.body));
    const asStrings = bySecret(strings.secret);
    const asNumbers = bySecret(numbers.secret);
    assert.equal(asStrings.length, 4, "each delivery verifies with its own endpoint's secret");
    assert.equal(asNumbers.length, 4);

    const events = asStrings.map((d) => verified(strings.secret, d));
    assert.deepEqual(sorted(events.map((e) => [e.type, e.data])), [
      ['plant.created', { id: MIN, name: 'Min' }],
      ['plant.created', { id: BIG, name: 'Monstera "id":1', tag: 'id' }],
      ['plant.deleted', { id: BIG }],
      ['plant.updated', { id: BIG, name: 'Monstera "id":1', tag: 'big' }],
    ]);
    // The default endpoint's bodies are the envelope as always, ids as exact JSON integers.
    const shapes = [
      new RegExp(`^\\{"type":"plant\\.created","timestamp":"${ISO}","data":\\{"id":${MIN},"name":"Min"\\}\\}$`),
      new RegExp(`^\\{"type":"plant\\.created","timestamp":"${ISO}","data":\\{"id":${BIG},"name":"Monstera \\\\"id\\\\":1","tag":"id"\\}\\}$`),
      new RegExp(`^\\{"type":"plant\\.deleted","timestamp":"${ISO}","data":\\{"id":${BIG}\\}\\}$`),
      new RegExp(`^\\{"type":"plant\\.updated","timestamp":"${ISO}","data":\\{"id":${BIG},"name":"Monstera \\\\"id\\\\":1","tag":"big"\\}\\}$`),
    ];
    for (const body of asNumbers.map((d) => d.body))
      assert.ok(
        shapes.some((shape) => shape.test(body)),
        body,
      );
    // The same event, byte for byte, but for the quotes around its id: same webhook-id, same text elsewhere.
    for (const delivery of asStrings) {
      const twin = asNumbers.find((d) => d.headers['webhook-id'] === delivery.headers['webhook-id']);
      assert.ok(twin, 'the other endpoint got the same event');
      assert.equal(delivery.body, twin.body.replace(/"data":\{"id":(-?\d+)/, '"data":{"id":"$1"'));
    }
  });

  it('after a secret rotation both signatures verify over the string body', async () => {
    const { t, receiver, register } = await webhookHarness(after);
    const { id, secret: old } = await register({ int64: 'string' });
    const rotated = (await t.call('POST', `/webhooks/${id}/rotate-secret`)).json<{ secret: string }>().secret;
    await t.call('POST', '/plants', { body: `{"id":${BIG},"name":"Fern"}` });
    const [delivery] = await receiver.waitFor(1);
    assert.equal(String(delivery!.headers['webhook-signature']).split(' ').length, 2);
    assert.deepEqual(verified(rotated, delivery!).data, { id: BIG, name: 'Fern' });
    assert.deepEqual(verified(old, delivery!).data, { id: BIG, name: 'Fern' });
  });

  it('every attempt follows the setting the endpoint has when it is sent: a replay after a PATCH sends strings, and back', async () => {
    const { t, receiver, register } = await webhookHarness(after, { dispatcher: { retrySchedule: [] } });
    receiver.answer = () => ({ status: 500 });
    const { id, secret } = await register();
    await t.call('POST', '/plants', { body: `{"id":${BIG},"name":"Fern"}` });
    const [first] = await receiver.waitFor(1);
    assert.match(first!.body, new RegExp(`"data":\\{"id":${BIG},`));
    const failed = async () => {
      const log = (await t.call('GET', `/webhooks/${id}/deliveries?status=failed`)).json<unknown[]>();
      return log.length === 1 ? log : undefined;
    };
    await until(failed, 'the message to be failed');

    receiver.answer = () => ({ status: 204 });
    assert.equal((await t.call('PATCH', `/webhooks/${id}`, { body: { int64: 'string' } })).statusCode, 200);
    const since = new Date(Date.now() - 60_000).toISOString();
    assert.equal((await t.call('POST', `/webhooks/${id}/replay`, { body: { since } })).json().requeued, 1);
    const [, replayed] = await receiver.waitFor(2);
    assert.equal(replayed!.headers['webhook-id'], first!.headers['webhook-id'], 'the same message');
    assert.deepEqual(verified(secret, replayed!).data, { id: BIG, name: 'Fern' });
    assert.equal(replayed!.body, first!.body.replace(`"id":${BIG}`, `"id":"${BIG}"`));

    // Set back: the next message is sent with integers again.
    assert.equal((await t.call('PATCH', `/webhooks/${id}`, { body: { int64: 'number' } })).statusCode, 200);
    await t.call('DELETE', `/plants/${BIG}`);
    const [, , deleted] = await receiver.waitFor(3);
    verified(secret, deleted!);
    assert.match(deleted!.body, new RegExp(`"data":\\{"id":${BIG}\\}\\}$`));
  });
});
