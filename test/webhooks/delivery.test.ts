import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { VERSION } from '../../src/version.js';
import { quietLog, webhookHarness } from './harness.js';
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

  it('retries a 500 by the schedule, with the same webhook-id, then marks the message failed; the log shows it', async () => {
    const { t, receiver, register } = await webhookHarness(after, { dispatcher: { retrySchedule: [0.05, 0.05] } });
    receiver.answer = () => ({ status: 500 });
    const { id, secret } = await register();
    await t.call('POST', '/plants', { body: { id: 1, name: 'a' } });
    const attempts = await receiver.waitFor(3);
    for (const a of attempts) verify(secret, a);
    assert.equal(new Set(attempts.map((a) => a.headers['webhook-id'])).size, 1, 'one webhook-id for every attempt');
    const [message] = await until(async () => {
      const log = (await t.call('GET', `/webhooks/${id}/deliveries`)).json();
      return log[0]?.status === 'failed' ? log : undefined;
    }, 'the message to be failed');
    assert.deepEqual(Object.keys(message).sort(), [
      'attempts',
      'id',
      'lastAttemptAt',
      'lastError',
      'lastStatus',
      'occurredAt',
      'plantId',
      'status',
      'type',
    ]);
    assert.equal(message.plantId, 1);
    assert.equal(message.type, 'plant.created');
    assert.equal(message.id, attempts[0]!.headers['webhook-id']);
    assert.equal(message.attempts, 3);
    assert.equal(message.lastStatus, 500);
    assert.equal(message.lastError, 'HTTP 500');
    // No fourth attempt: a later message, claimed after where a retry of the failed one would have been,
    // is delivered and nothing is in flight any more; the failed one still has its three attempts.
    receiver.answer = () => ({ status: 204 });
    await t.call('POST', '/plants', { body: { id: 2, name: 'b' } });
    await until(async () => {
      const log = (await t.call('GET', `/webhooks/${id}/deliveries?status=delivered`)).json();
      return log.length === 1 && receiver.inFlight === 0;
    }, 'the later message to be delivered');
    const attemptsOf = (webhookId: unknown) => receiver.received.filter((d) => d.headers['webhook-id'] === webhookId).length;
    assert.equal(attemptsOf(attempts[0]!.headers['webhook-id']), 3, 'no fourth attempt');
  });

  it('a success after failures delivers the message; the log shows the attempts and the pending state before', async () => {
    const { t, receiver, register } = await webhookHarness(after, { dispatcher: { retrySchedule: [0.3, 0.3] } });
    receiver.answer = (_d, index) => ({ status: index === 0 ? 503 : 200 });
    const { id } = await register();
    await t.call('POST', '/plants', { body: { id: 1, name: 'a' } });
    await receiver.waitFor(1);
    const pending = await until(async () => {
      const [m] = (await t.call('GET', `/webhooks/${id}/deliveries?status=pending`)).json();
      return m?.attempts === 1 ? m : undefined;
    }, 'the first attempt to be recorded');
    assert.equal(pending.lastStatus, 503);
    assert.match(pending.nextAttemptAt, /^\d{4}-/);
    await receiver.waitFor(2);
    const delivered = await until(async () => {
      const [m] = (await t.call('GET', `/webhooks/${id}/deliveries?status=delivered`)).json();
      return m;
    }, 'the message to be delivered');
    assert.equal(delivered.attempts, 2);
    assert.equal(delivered.lastStatus, 200);
    assert.equal(delivered.lastError, undefined);
    assert.equal(delivered.nextAttemptAt, undefined);
  });

  it('honours Retry-After on a 429 or 503: the next attempt waits at least that long', async () => {
    const { t, receiver, register } = await webhookHarness(after, { dispatcher: { retrySchedule: [0.01] } });
    receiver.answer = (_d, index) => (index === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 204 });
    await register();
    await t.call('POST', '/plants', { body: { id: 1, name: 'a' } });
    const [first, second] = await receiver.waitFor(2, 10_000);
    // A lower bound, which a loaded machine only lengthens: the retry is scheduled a second after the answer.
    assert.ok(second!.at - first!.at >= 1000, `waited ${second!.at - first!.at} ms`);
  });

  it('410 Gone disables the endpoint at once, with the reason; later events are recorded as failed; enabling lets pending ones flow', async () => {
    const { t, receiver, register } = await webhookHarness(after, { dispatcher: { retrySchedule: [0.05] } });
    receiver.answer = () => ({ status: 410 });
    const { id } = await register();
    await t.call('POST', '/plants', { body: { id: 1, name: 'a' } });
    await receiver.waitFor(1);
    const endpoint = await until(async () => {
      const e = (await t.call('GET', `/webhooks/${id}`)).json();
      return e.enabled === false ? e : undefined;
    }, 'the endpoint to be disabled');
    assert.match(endpoint.disabledReason, /410 Gone/);
    await t.call('POST', '/plants', { body: { id: 2, name: 'b' } });
    const log = (await t.call('GET', `/webhooks/${id}/deliveries`)).json();
    assert.deepEqual(
      log.map((m: { status: string }) => m.status),
      ['failed', 'failed'],
    );
    assert.equal(log[0].attempts, 0);
    assert.match(log[0].lastError, /disabled/);

    receiver.answer = () => ({ status: 204 });
    const enabled = (await t.call('PATCH', `/webhooks/${id}`, { body: { enabled: true } })).json();
    assert.equal(enabled.enabled, true);
    assert.equal(enabled.disabledReason, undefined);
    // The failed messages are sent again by a replay.
    const replay = (await t.call('POST', `/webhooks/${id}/replay`, { body: { since: new Date(Date.now() - 60_000).toISOString() } })).json();
    assert.equal(replay.requeued, 2);
    const again = await receiver.waitFor(3);
    const replayed = again.slice(1).map((d) => d.headers['webhook-id']);
    assert.ok(replayed.includes(again[0]!.headers['webhook-id']), 'a replay keeps the webhook-id');
    const first = await until(async () => {
      const l = (await t.call('GET', `/webhooks/${id}/deliveries`)).json();
      const m = l.find((x: { id: string }) => x.id === again[0]!.headers['webhook-id']);
      return m?.status === 'delivered' ? m : undefined;
    }, 'the replayed message to be delivered');
    assert.equal(first.attempts, 2, 'attempts keep counting across a replay');
  });

  it('a redirect is a failure, not followed', async () => {
    const { t, receiver, register } = await webhookHarness(after, { dispatcher: { retrySchedule: [] as number[] } });
    receiver.answer = () => ({ status: 302, headers: { location: 'http://127.0.0.1:1/elsewhere' } });
    const { id } = await register();
    await t.call('POST', '/plants', { body: { id: 1, name: 'a' } });
    await receiver.waitFor(1);
    const [message] = await until(async () => {
      const log = (await t.call('GET', `/webhooks/${id}/deliveries`)).json();
      return log[0]?.status === 'failed' ? log : undefined;
    }, 'the message to fail');
    assert.equal(message.lastStatus, 302);
    assert.match(message.lastError, /redirects are not followed/);
    assert.equal(receiver.received.length, 1);
  });

  it('a receiver slower than WEBHOOK_TIMEOUT_MS fails the attempt, which is retried; the request path never waits for it', async () => {
    const { t, receiver, register } = await webhookHarness(after, { dispatcher: { timeoutMs: 300, retrySchedule: [0.05] } });
    receiver.answer = (_d, index) => (index === 0 ? { status: 204, delayMs: 3000 } : { status: 204 });
    const { id } = await register();
    await t.call('POST', '/plants', { body: { id: 1, name: 'a' } });
    await receiver.waitFor(1);
    // The receiver holds the first delivery; plant writes are answered meanwhile.
    assert.equal((await t.call('POST', '/plants', { body: { id: 2, name: 'b' } })).statusCode, 200);
    assert.equal(receiver.received.length >= 1, true);
    const log = await until(async () => {
      const l = (await t.call('GET', `/webhooks/${id}/deliveries`)).json();
      return l.length === 2 && l.every((m: { status: string }) => m.status === 'delivered') ? l : undefined;
    }, 'both messages to be delivered');
    const retried = log.find((m: { attempts: number }) => m.attempts === 2);
    assert.ok(retried, JSON.stringify(log));
  });

  it('an endpoint failing for WEBHOOK_DISABLE_AFTER_HOURS, with no success, is disabled with the reason shown', async () => {
    const { t, receiver, register } = await webhookHarness(after, {
      dispatcher: { retrySchedule: [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1], disableAfterHours: 0.5 / 3600 },
    });
    receiver.answer = () => ({ status: 500 });
    const { id } = await register();
    await t.call('POST', '/plants', { body: { id: 1, name: 'a' } });
    const endpoint = await until(async () => {
      const e = (await t.call('GET', `/webhooks/${id}`)).json();
      return e.enabled === false ? e : undefined;
    }, 'the endpoint to be disabled');
    assert.match(endpoint.disabledReason, /with no success/);
    const [message] = (await t.call('GET', `/webhooks/${id}/deliveries`)).json();
    assert.equal(message.status, 'pending', 'its message waits for the endpoint to be enabled');
  });

  it('refuses to deliver to a private address when private networks are not allowed, checked at delivery', async () => {
    // Registered while allowed (as if the setting changed, or DNS now answers otherwise), delivered while not.
    const { t, receiver, register } = await webhookHarness(after, {
      sender: { allowPrivateNetworks: false },
      dispatcher: { retrySchedule: [] as number[] },
    });
    const { id } = await register();
    await t.call('POST', '/plants', { body: { id: 1, name: 'a' } });
    const [message] = await until(async () => {
      const log = (await t.call('GET', `/webhooks/${id}/deliveries`)).json();
      return log[0]?.status === 'failed' ? log : undefined;
    }, 'the attempt to fail');
    assert.equal(message.lastError, 'the host 127.0.0.1 is not a public address: webhooks may only reach the public internet');
    assert.equal(message.lastStatus, null);
    assert.equal(receiver.received.length, 0, 'no connection was made');
  });

  it('a name that resolves to a private address at delivery: the recorded error names the host only, the log the address and rule', async () => {
    const warnings: Array<{ fields: Record<string, unknown>; message: string }> = [];
    const log = {
      ...quietLog,
      warn: (fields: object, message?: string) => void warnings.push({ fields: fields as Record<string, unknown>, message: message ?? '' }),
    };
    const { t, receiver, register } = await webhookHarness(after, {
      sender: { allowPrivateNetworks: false },
      dispatcher: { retrySchedule: [] as number[] },
      log,
    });
    // Registered while allowed; localhost resolves (from /etc/hosts) to loopback when the delivery connects.
    const { id } = await register({ url: receiver.url.replace('127.0.0.1', 'localhost') });
    await t.call('POST', '/plants', { body: { id: 1, name: 'a' } });
    const [message] = await until(async () => {
      const deliveries = (await t.call('GET', `/webhooks/${id}/deliveries`)).json();
      return deliveries[0]?.status === 'failed' ? deliveries : undefined;
    }, 'the attempt to fail');
    assert.equal(message.lastError, 'the host localhost is not a public address: webhooks may only reach the public internet');
    assert.equal(receiver.received.length, 0, 'no connection was made');
    const refused = warnings.find((w) => w.message === 'webhooks: delivery refused: not a public address');
    assert.ok(refused, JSON.stringify(warnings));
    assert.equal(refused.fields.host, 'localhost');
    assert.equal(refused.fields.endpoint, id);
    assert.ok(['127.0.0.1', '::1'].includes(String(refused.fields.address)), JSON.stringify(refused.fields));
    assert.equal(refused.fields.rule, 'loopback');
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
