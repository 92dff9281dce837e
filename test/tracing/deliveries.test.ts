import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { webhookHarness } from '../webhooks/harness.js';
import { CLIENT, ERROR, tracingTo, type ReceivedSpan } from './collector.js';
import { until } from '../toolkit.js';

/**
 * Webhook deliveries traced: each attempt a CLIENT span, the child of the request whose write queued the
 * message (its traceparent kept in the outbox), and the delivery carries that span's traceparent so the
 * receiver can join the trace. Without tracing, no delivery carries one.
 */

// At the top level: an after() registered inside a before() hook would run as soon as that hook ended.
const { collector, tracing } = await tracingTo(after, { otelServiceName: 'plant-store-deliveries' });

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0([01])$/;

async function exported(): Promise<ReceivedSpan[]> {
  await tracing.flush();
  return collector.spans;
}

/** Waits until the delivery spans of this webhook-id (attempts) have been exported. */
async function deliverySpans(webhookId: string, count: number): Promise<ReceivedSpan[]> {
  // A span ends once its attempt's answer is in: a moment after the receiver saw the request.
  const spans = await until(async () => {
    const found = (await exported()).filter((s) => s.attributes['plant_store.webhook.id'] === webhookId);
    return found.length >= count && found;
  }, `${count} delivery spans of ${webhookId}`);
  return spans.sort((a, b) => Number(a.attributes['plant_store.webhook.attempt']) - Number(b.attributes['plant_store.webhook.attempt']));
}

describe('webhook delivery spans', () => {
  it("continue the trace of the write that caused the event, and the delivery carries the attempt's traceparent", async () => {
    const { t, receiver, register } = await webhookHarness(after, { tracing });
    const endpoint = await register({ events: ['plant.created'] });
    const caller = { traceId: hex(16), spanId: hex(8) };
    const created = await t.call('POST', '/plants', {
      body: { id: 424242, name: 'Traced' },
      headers: { traceparent: `00-${caller.traceId}-${caller.spanId}-01` },
    });
    assert.equal(created.statusCode, 200);
    const [delivery] = await receiver.waitFor(1);
    const header = TRACEPARENT.exec(String(delivery!.headers.traceparent));
    assert.ok(header, `a W3C traceparent header: ${String(delivery!.headers.traceparent)}`);
    assert.equal(header[1], caller.traceId, "the caller's trace");
    assert.equal(header[3], '1', 'sampled');

    const [span] = await deliverySpans(String(delivery!.headers['webhook-id']), 1);
    assert.ok(span, 'the delivery span arrived');
    const spans = collector.spans;
    const request = spans.find((s) => s.attributes['plant_store.request.id'] === created.headers['x-request-id'])!;
    assert.equal(request.traceId, caller.traceId);
    assert.equal(span.name, 'webhook delivery');
    assert.equal(span.kind, CLIENT);
    assert.equal(span.traceId, caller.traceId);
    assert.equal(span.parentSpanId, request.spanId, 'the child of the request whose write queued it');
    assert.equal(header[2], span.spanId, "the header names the attempt's own span");
    const port = new URL(receiver.url).port;
    assert.deepEqual(span.attributes, {
      'http.request.method': 'POST',
      'url.full': `http://127.0.0.1:${port}/REDACTED`,
      'url.scheme': 'http',
      'server.address': '127.0.0.1',
      'server.port': Number(port),
      'http.response.status_code': 204,
      'plant_store.webhook.attempt': 1,
      'plant_store.webhook.id': delivery!.headers['webhook-id'],
      'plant_store.webhook.endpoint': endpoint.id,
    });
    assert.equal(span.status.code, 0);
    assert.equal(span.resource['service.name'], 'plant-store-deliveries');
    // The whole path of the request is one trace: the caller, the request, its commit, the delivery.
    const commit = spans.find((s) => s.parentSpanId === request.spanId && s.name.endsWith(' commit'));
    assert.ok(commit, 'the commit that the request waited on, in the same trace');
  });

  it('make one span per attempt: a failed one is an error, a retry counts its resends', async () => {
    const { t, receiver, register } = await webhookHarness(after, { tracing });
    receiver.answer = (_delivery, index) => ({ status: index === 0 ? 500 : 204 });
    await register({ events: ['plant.created'] });
    const created = await t.call('POST', '/plants', { body: { id: 424243, name: 'Retried' } });
    const deliveries = await receiver.waitFor(2);
    const [first, second] = await deliverySpans(String(deliveries[0]!.headers['webhook-id']), 2);
    assert.ok(first && second, 'two attempts, two spans');
    const request = collector.spans.find((s) => s.attributes['plant_store.request.id'] === created.headers['x-request-id'])!;
    for (const span of [first, second]) assert.equal(span.parentSpanId, request.spanId);
    assert.equal(first.attributes['plant_store.webhook.attempt'], 1);
    assert.equal(first.attributes['http.response.status_code'], 500);
    assert.equal(first.attributes['error.type'], '500');
    assert.equal(first.status.code, ERROR);
    assert.equal(first.status.message, 'HTTP 500');
    assert.equal(first.attributes['http.request.resend_count'], undefined);
    assert.equal(second.attributes['plant_store.webhook.attempt'], 2);
    assert.equal(second.attributes['http.request.resend_count'], 1);
    assert.equal(second.status.code, 0);
    assert.notEqual(first.spanId, second.spanId);
    assert.deepEqual(
      deliveries.map((d) => TRACEPARENT.exec(String(d.headers.traceparent))?.[2]),
      [first.spanId, second.spanId],
      'each attempt carries its own span',
    );
  });

  it('record an attempt that got no answer, and never the path or query of the URL (they often hold a secret)', async () => {
    const { t, receiver, register } = await webhookHarness(after, { tracing, dispatcher: { retrySchedule: [], timeoutMs: 300 } });
    receiver.answer = () => ({ status: 204, delayMs: 1000 });
    const secret = `path-secret-${hex(4)}`;
    await register({ url: `${receiver.url}/T0/B0/${secret}?token=${secret}`, events: ['plant.created'] });
    await t.call('POST', '/plants', { body: { id: 424244, name: 'Slow' } });
    const [delivery] = await receiver.waitFor(1);
    const [span] = await deliverySpans(String(delivery!.headers['webhook-id']), 1);
    assert.ok(span);
    assert.equal(span.attributes['url.full'], `http://127.0.0.1:${new URL(receiver.url).port}/REDACTED?REDACTED`);
    assert.ok(!JSON.stringify(collector.spans).includes(secret), 'no span holds the secret');
    assert.equal(span.attributes['http.response.status_code'], undefined, 'no answer');
    assert.equal(span.attributes['error.type'], '_OTHER');
    assert.equal(span.status.code, ERROR);
    assert.match(span.status.message, /no answer within 300 ms/);
  });

  it('start a trace of their own for a message no traced request queued (a bulk import)', async () => {
    const { t, receiver, register } = await webhookHarness(after, { tracing });
    await register({ events: ['plant.created'] });
    const imported = await t.call('POST', '/plants/import', {
      body: '{"id":424245,"name":"Imported"}\n',
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(imported.statusCode, 200, imported.payload);
    const [delivery] = await receiver.waitFor(1);
    const [span] = await deliverySpans(String(delivery!.headers['webhook-id']), 1);
    assert.ok(span);
    assert.equal(span.parentSpanId, '');
    const header = TRACEPARENT.exec(String(delivery!.headers.traceparent));
    assert.deepEqual([header?.[1], header?.[2]], [span.traceId, span.spanId], 'still carried, so the receiver joins this trace');
  });
});

describe('webhook deliveries without tracing', () => {
  it('carry no traceparent', async () => {
    const { t, receiver, register } = await webhookHarness(after);
    await register({ events: ['plant.created'] });
    await t.call('POST', '/plants', { body: { id: 424246, name: 'Untraced' }, headers: { traceparent: `00-${hex(16)}-${hex(8)}-01` } });
    const [delivery] = await receiver.waitFor(1);
    assert.equal(delivery!.headers.traceparent, undefined);
    assert.equal(delivery!.headers.tracestate, undefined);
  });
});
