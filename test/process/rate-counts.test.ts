import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SupervisorRateCounts } from '../../src/process/rate-counts.js';
import { SupervisorRateCounter } from '../../src/process/rate-counter.js';
import type { WorkerMessage } from '../../src/process/protocol.js';

/**
 * The rate limits of several workers on SQLite, counted by their supervisor (process/rate-counts.ts) for
 * every worker (process/rate-counter.ts): one budget per token, not one per worker. The whole service with
 * two workers: test/process/rate-counts.process.test.ts.
 */

test('the supervisor counts every worker’s requests against one budget per key and window', () => {
  const counts = new SupervisorRateCounts();
  assert.deepEqual(counts.hit(100, ['token:a', 'token:a', 'ip:10.0.0.1']), [1, 2, 1]);
  assert.deepEqual(counts.hit(100, ['token:a']), [3], "another worker's request counts on");
  // The next window starts again; a request of the window before, its message crossing the turn, counts there.
  assert.deepEqual(counts.hit(101, ['token:a']), [1]);
  assert.deepEqual(counts.hit(100, ['token:a']), [4]);
  // Two windows on, the oldest is dropped.
  assert.deepEqual(counts.hit(102, ['token:a']), [1]);
  assert.deepEqual(counts.hit(101, ['token:a']), [2]);
});

/** A worker's counter on a channel the test answers. */
function counterOnChannel() {
  const sent: Array<Extract<WorkerMessage, { plantStore: 'rate-hits' }>> = [];
  let closed = false;
  const counter = new SupervisorRateCounter((message, unsent) => {
    if (closed) return unsent();
    if (message.plantStore === 'rate-hits') sent.push(message);
  });
  return { counter, sent, close: () => (closed = true) };
}

test("a worker asks for the hits of one turn in one message, and each request gets its key's count", async () => {
  const { counter, sent } = counterOnChannel();
  const hits = [counter.hit('token:a', 7), counter.hit('token:b', 7), counter.hit('token:a', 7)];
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(sent.length, 1);
  assert.deepEqual(sent[0]?.keys, ['token:a', 'token:b', 'token:a']);
  assert.equal(sent[0]?.window, 7);
  counter.counted({ plantStore: 'rate-hits', request: sent[0].request, counts: [4, 1, 5] });
  assert.deepEqual(await Promise.all(hits), [4, 1, 5]);

  // A later turn: a message of its own; an answer to no request asked changes nothing.
  const later = counter.hit('token:a', 7);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(sent.length, 2);
  assert.notEqual(sent[1]?.request, sent[0]?.request);
  counter.counted({ plantStore: 'rate-hits', request: 999, counts: [1] });
  counter.counted({ plantStore: 'rate-hits', request: sent[1]!.request, counts: [6] });
  assert.equal(await later, 6);
});

test('hits of two windows in one turn go in two messages, each with its window', async () => {
  const { counter, sent } = counterOnChannel();
  const first = counter.hit('token:a', 7);
  const second = counter.hit('token:a', 8);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    sent.map((message) => [message.window, message.keys]),
    [
      [7, ['token:a']],
      [8, ['token:a']],
    ],
  );
  for (const message of sent) counter.counted({ plantStore: 'rate-hits', request: message.request, counts: [message.window] });
  assert.deepEqual(await Promise.all([first, second]), [7, 8]);
});

test('with the supervisor gone, the requests waiting are answered (each counted as the first), never left hanging', async () => {
  const { counter, close } = counterOnChannel();
  close();
  assert.deepEqual(await Promise.all([counter.hit('token:a', 7), counter.hit('token:a', 7)]), [1, 1]);
});
