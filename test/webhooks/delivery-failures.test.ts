import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { quietLog, webhookHarness } from './harness.js';
import { verify } from './receiver.js';
import { parseRetryAfter } from '../../src/webhooks/delivery.js';
import { timeText } from '../../src/webhooks/views.js';
import { until } from '../toolkit.js';

/** Deliveries to a receiver that fails, as the schedule, the log and the endpoint's state say (delivery.test.ts: those that succeed). */
describe('webhook deliveries that fail: retries, Retry-After, 410, redirects, timeouts, disabling, private addresses', () => {
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

  it("bounds a receiver's Retry-After to 30 days: a huge one neither fails the dispatcher nor the deliveries log", async () => {
    const { t, receiver, register } = await webhookHarness(after, { dispatcher: { retrySchedule: [0.01] } });
    receiver.answer = () => ({ status: 503, headers: { 'retry-after': '99999999999999' } });
    const { id } = await register();
    const before = Date.now();
    await t.call('POST', '/plants', { body: { id: 1, name: 'a' } });
    await receiver.waitFor(1);
    const pending = await until(async () => {
      const res = await t.call('GET', `/webhooks/${id}/deliveries`);
      assert.equal(res.statusCode, 200, res.payload);
      const [m] = res.json();
      return m?.attempts === 1 ? m : undefined;
    }, 'the attempt to be recorded');
    const wait = Date.parse(pending.nextAttemptAt) - before;
    const DAYS_30 = 30 * 86_400_000;
    assert.ok(wait > DAYS_30 - 60_000 && wait <= DAYS_30 + 60_000, `the next attempt in ${wait} ms`);
    // The dispatcher goes on: a later event is delivered.
    receiver.answer = () => ({ status: 204 });
    await t.call('POST', '/plants', { body: { id: 2, name: 'b' } });
    await receiver.waitFor(2);
    assert.equal(parseRetryAfter('99999999999999', 0), DAYS_30);
    assert.equal(parseRetryAfter('Fri, 31 Dec 9999 23:59:59 GMT', 0), DAYS_30);
    assert.equal(parseRetryAfter('120', 0), 120_000);
    assert.equal(timeText(1e17), '+275760-09-13T00:00:00.000Z', 'a time no Date holds, shown as the latest one that does');
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

  it('replays the window its times name in every form the check takes: offsets of hours alone, leap seconds, fractions', async () => {
    const { t, receiver, register } = await webhookHarness(after, { dispatcher: { retrySchedule: [] as number[] } });
    receiver.answer = () => ({ status: 500 });
    const { id } = await register();
    await t.call('POST', '/plants', { body: { id: 1, name: 'a' } });
    const failed = async (attempts: number) =>
      until(async () => {
        const [message] = (await t.call('GET', `/webhooks/${id}/deliveries`)).json();
        return message?.status === 'failed' && message.attempts === attempts ? message : undefined;
      }, `the message failed after ${attempts} attempts`);
    const at = Date.parse((await failed(1)).occurredAt);
    /** The instant `ms`, written at an offset of `hours` (+hh, +hhmm or +hh:mm). */
    const written = (ms: number, hours: number, form: (hh: string) => string) =>
      new Date(ms + hours * 3_600_000).toISOString().replace('Z', form(String(hours).padStart(2, '0')));
    const windows: Array<[string, Record<string, string>, number]> = [
      ['since an hour before, at +01', { since: written(at - 3_600_000, 1, (hh) => `+${hh}`) }, 1],
      ['since a millisecond after, at +0100', { since: written(at + 1, 1, (hh) => `+${hh}00`) }, 0],
      ['until a millisecond before, at +05', { since: '2016-12-31T23:59:60Z', until: written(at - 1, 5, (hh) => `+${hh}`) }, 0],
      [
        'from a leap second to the event, a space between date and time',
        { since: '2016-12-31T23:59:60Z', until: new Date(at).toISOString().replace('T', ' ') },
        1,
      ],
      ['until a leap second still to come', { since: new Date(at).toISOString().replace('Z', '999999z'), until: '2999-12-31T23:59:60Z' }, 1],
    ];
    let attempts = 1;
    for (const [what, window, requeued] of windows) {
      const replay = await t.call('POST', `/webhooks/${id}/replay`, { body: window });
      assert.equal(replay.statusCode, 202, `${what}: ${replay.payload}`);
      assert.deepEqual(replay.json(), { requeued }, `${what}: ${JSON.stringify(window)}`);
      if (requeued > 0) await failed(++attempts);
    }
    const leapAtNoon = await t.call('POST', `/webhooks/${id}/replay`, { body: { since: '2026-01-31T12:00:60Z' } });
    assert.equal(leapAtNoon.statusCode, 400, 'a leap second is the last of a UTC day only');
  });
});
