import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { AttemptRecord } from '../../src/store/webhook-store.js';
import { FAILURE_LOG_INTERVAL_MS, FailureLog } from '../../src/webhooks/failure-log.js';

import { quietLog, webhookHarness } from './harness.js';
import { until } from '../toolkit.js';

interface Line {
  fields: Record<string, unknown>;
  message: string;
}

function recorder(): { lines: Line[]; log: { warn: (fields: object, message?: string) => void } } {
  const lines: Line[] = [];
  return { lines, log: { warn: (fields, message) => void lines.push({ fields: fields as Record<string, unknown>, message: message ?? '' }) } };
}

function attempt(endpointId: string, overrides: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    seq: '1',
    endpointId,
    at: 0,
    status: 503,
    error: 'HTTP 503',
    outcome: 'retry',
    nextAttemptAt: Date.UTC(2026, 0, 2, 3, 4, 5),
    ...overrides,
  };
}

describe('failed delivery attempts in the log', () => {
  it('warns of the first failure of an endpoint, naming it, the error and when it is retried', () => {
    const { lines, log } = recorder();
    new FailureLog(log, () => 1000).failed(attempt('ep_a'), 'msg_1');
    assert.deepEqual(lines, [
      {
        fields: { endpoint: 'ep_a', webhookId: 'msg_1', status: 503, error: 'HTTP 503', failedSinceLastLine: 0 },
        message: 'webhooks: delivery to endpoint ep_a failed (HTTP 503); retried at 2026-01-02T03:04:05.000Z',
      },
    ]);
  });

  it('says so when no retry is left, and when there was no answer at all', () => {
    const { lines, log } = recorder();
    const failures = new FailureLog(log, () => 0);
    failures.failed(attempt('ep_a', { outcome: 'failed', nextAttemptAt: undefined }), 'msg_1');
    failures.failed(attempt('ep_b', { status: null, error: 'no answer within 15000 ms' }), 'msg_2');
    assert.deepEqual(
      lines.map((line) => line.message),
      [
        'webhooks: delivery to endpoint ep_a failed (HTTP 503); no retry left: the message is failed',
        'webhooks: delivery to endpoint ep_b failed (no answer within 15000 ms); retried at 2026-01-02T03:04:05.000Z',
      ],
    );
  });

  it('writes one line per endpoint per minute at most, the next one counting the failures in between', () => {
    const { lines, log } = recorder();
    let now = 0;
    const failures = new FailureLog(log, () => now);
    for (; now < FAILURE_LOG_INTERVAL_MS; now += 1000) failures.failed(attempt('ep_a'), 'msg_1');
    assert.equal(lines.length, 1, 'one line in the first minute, for 60 failures');
    failures.failed(attempt('ep_a'), 'msg_2');
    assert.equal(lines.length, 2);
    assert.equal(lines[1]!.fields.failedSinceLastLine, 59);
    failures.failed(attempt('ep_b'), 'msg_3');
    assert.equal(lines.length, 3, 'another endpoint has a line of its own');
    now += FAILURE_LOG_INTERVAL_MS - 1;
    failures.failed(attempt('ep_a'), 'msg_4');
    assert.equal(lines.length, 3, 'still within the minute');
  });

  it('reaches the log from the dispatcher: a receiver answering 500 three times is one warning', async () => {
    const { lines, log } = recorder();
    const { t, receiver, register } = await webhookHarness(after, { dispatcher: { retrySchedule: [0.05, 0.05] }, log: { ...quietLog, ...log } });
    receiver.answer = () => ({ status: 500 });
    const { id } = await register();
    await t.call('POST', '/plants', { body: { id: 1, name: 'a' } });
    await receiver.waitFor(3);
    await until(async () => (await t.call('GET', `/webhooks/${id}/deliveries`)).json()[0]?.status === 'failed', 'the message to fail', {
      timeoutMs: 10_000,
    });
    const failures = lines.filter((line) => line.message.startsWith('webhooks: delivery to endpoint'));
    assert.equal(failures.length, 1, JSON.stringify(lines));
    assert.match(failures[0]!.message, new RegExp(`^webhooks: delivery to endpoint ${id} failed \\(HTTP 500\\); retried at \\d{4}-`));
    assert.equal(failures[0]!.fields.endpoint, id);
  });
});
