import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { VERSION } from '../../src/version.js';
import { webhookHarness } from './harness.js';
import { verify } from './receiver.js';
import { until } from '../toolkit.js';

describe('webhook deliveries to a real receiver, verified with the standardwebhooks package', () => {
  it('announces created, updated and deleted plants, signed, with exact int64 ids and the documented headers', async () => {
    const { t, receiver, register } = await webhookHarness(after);
    const { id: endpoint, secret } = await register();
    const id = '9223372036854775807';
    assert.equal((await t.call('POST', '/plants', { body: `{"id":${id},"name":"Monstera","tag":"tropical"}` })).statusCode, 200);
    assert.equal((await t.call('PUT', `/plants/${id}`, { body: { name: 'Monstera deliciosa' } })).statusCode, 200);
    assert.equal((await t.call('PATCH', `/plants/${id}`, { body: { tag: 'big' } })).statusCode, 200);
    assert.equal((await t.call('DELETE', `/plants/${id}`)).statusCode, 204);
    const deliveries = await receiver.waitFor(4);
    const bodies = deliveries.map((d) => verify(secret, d));
    bodies.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    assert.deepEqual(
      bodies.map((b) => [b.type, b.data]),
      [
        ['plant.created', { id, name: 'Monstera', tag: 'tropical' }],
        ['plant.updated', { id, name: 'Monstera deliciosa' }],
        ['plant.updated', { id, name: 'Monstera deliciosa', tag: 'big' }],
        ['plant.deleted', { id }],
      ],
    );
    for (const delivery of deliveries) {
      assert.deepEqual(Object.keys(JSON.parse(delivery.body.replace(/"id":\d+/, '"id":0'))), ['type', 'timestamp', 'data']);
      assert.match(delivery.body, /"id":9223372036854775807[,}]/, 'the id is a plain JSON integer, exact');
      assert.equal(delivery.headers['content-type'], 'application/json');
      assert.equal(delivery.headers['user-agent'], `plant-store/${VERSION}`);
      assert.match(String(delivery.headers['webhook-id']), /^msg_[0-9A-Z]{26}$/);
      assert.ok(Math.abs(Number(delivery.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
      assert.match(String(delivery.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
    }
    // A change that changed nothing announces nothing: a 412, a 404.
    assert.equal((await t.call('POST', '/plants', { body: { id: 5, name: 'x' } })).statusCode, 200);
    assert.equal((await t.call('POST', '/plants', { body: { id: 5, name: 'y' }, headers: { 'if-none-match': '*' } })).statusCode, 412);
    assert.equal((await t.call('DELETE', '/plants/404')).statusCode, 404);
    assert.equal((await t.call('PATCH', '/plants/404', { body: { name: 'z' } })).statusCode, 404);
    // A message is made in the transaction of the write it announces: once the writes are answered, the
    // endpoint's log holds every message there will be.
    const log = (await t.call('GET', `/webhooks/${endpoint}/deliveries?limit=100`)).json<Array<{ type: string; plantId: number }>>();
    assert.equal(log.length, 5, 'only the one real change was announced');
    assert.equal(log.filter((m) => String(m.plantId) === '5').length, 1);
    await receiver.waitFor(5);
  });

  it('sends one event to every subscribed endpoint with the same webhook-id, and only the events each asked for', async () => {
    const { t, receiver, register } = await webhookHarness(after);
    const all = await register();
    const deletes = await register({ events: ['plant.deleted'] });
    await t.call('POST', '/plants', { body: { id: 1, name: 'a' } });
    await t.call('DELETE', '/plants/1');
    const deliveries = await receiver.waitFor(3);
    const deleted = deliveries.filter((d) => d.body.includes('plant.deleted'));
    assert.equal(deleted.length, 2);
    assert.equal(deleted[0]!.headers['webhook-id'], deleted[1]!.headers['webhook-id']);
    // Each endpoint's copy is signed with its own secret.
    const secrets = [all.secret, deletes.secret];
    const verifies = (secret: string, delivery: (typeof deleted)[number]) => {
      try {
        verify(secret, delivery);
        return true;
      } catch {
        return false;
      }
    };
    for (const d of deleted) assert.equal(secrets.filter((s) => verifies(s, d)).length, 1, "each copy verifies with its endpoint's secret only");
  });

  it('after a secret rotation every delivery carries both signatures, new first, and each verifies', async () => {
    const { t, receiver, register } = await webhookHarness(after);
    const { id, secret: old } = await register();
    const rotated = (await t.call('POST', `/webhooks/${id}/rotate-secret`)).json().secret as string;
    await t.call('POST', '/plants', { body: { id: 1, name: 'a' } });
    const [delivery] = await receiver.waitFor(1);
    const signatures = String(delivery!.headers['webhook-signature']).split(' ');
    assert.equal(signatures.length, 2);
    verify(rotated, delivery!);
    verify(old, delivery!);
    // The new secret's signature comes first.
    const headers = {
      'webhook-id': String(delivery!.headers['webhook-id']),
      'webhook-timestamp': String(delivery!.headers['webhook-timestamp']),
      'webhook-signature': signatures[0]!,
    };
    new Webhook(rotated).verify(delivery!.body, headers);
  });
});

describe('deliveries give way to requests', () => {
  it('while the request path is saturated: one delivery at a time, with a pause; all of them again on relief', async () => {
    const relief: Array<() => void> = [];
    const pressure = { high: true, onRelief: (listener: () => void) => void relief.push(listener) };
    const { t, receiver, register } = await webhookHarness(after, { dispatcher: { concurrency: 8, timeoutMs: 30_000 }, pressure });
    receiver.answer = () => ({ status: 204, delayMs: 5 });
    await register({ events: ['plant.created'] });
    for (let id = 1; id <= 9; id++) await t.call('POST', '/plants', { body: { id, name: `p${id}` } });
    const slow = await receiver.waitFor(8);
    assert.deepEqual(receiver.concurrent, []);
    assert.equal(receiver.maxInFlight, 1, 'one at a time: each sent once the one before was answered');
    // The pause (50 ms) is between claims: six of them lie between the second arrival and the eighth. The bound
    // is the point, and generous: without a pause six answers of 5 ms take some tens of ms, with it 300 ms
    // less the second arrival's own latency, which a loaded machine may stretch (hence 200, not 300). The
    // first arrival is left out: the process's first delivery also loads undici (delivery.ts).
    const span = slow.at(-1)!.at - slow[1]!.at;
    assert.ok(span >= 200, `one at a time, a pause between: ${slow.map((d) => d.at).join(' ')}`);

    // Held unanswered from now on: under pressure the one in flight keeps the others waiting in the store.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    receiver.answer = () => ({ status: 204, after: held });
    for (let id = 10; id <= 30; id++) await t.call('POST', '/plants', { body: { id, name: `p${id}` } });
    await until(() => receiver.inFlight === 1, 'a delivery held');
    assert.equal(receiver.maxInFlight, 1, 'still one at a time');
    // On relief the others go at once, beside the one held: several in flight, up to the concurrency.
    pressure.high = false;
    for (const listener of relief) listener();
    await until(() => receiver.inFlight > 1, 'several deliveries in flight at once after the relief');
    release();
    await receiver.waitFor(30);
    assert.ok(receiver.maxInFlight > 1 && receiver.maxInFlight <= 8, `${receiver.maxInFlight} in flight at most`);
    assert.deepEqual(receiver.concurrent, []);
  });
});
