import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryRateLimiter } from '../../src/http/rate-limit.js';
import { MAX_ADDRESS_KEYS } from '../../src/http/rate-windows.js';

/**
 * In-memory rate limits (SQLite) handed from the worker a reload replaces to the one that replaces it
 * (process/signals.ts): a client's budget is not made whole again by a reload.
 */

const MINUTE = 60_000;

test('the counts of the window are handed on and added to the new process’s own', () => {
  const now = 10 * MINUTE + 5000;
  const old = new MemoryRateLimiter(5, () => now);
  for (let i = 0; i < 3; i++) old.hit('token:a');
  old.hit('ip:192.0.2.1');
  const next = new MemoryRateLimiter(5, () => now);
  next.hit('token:a');
  next.absorb(old.counted());
  const decision = next.hit('token:a');
  assert.equal(decision.remaining, 0, '3 + 1 + this one = 5 of 5');
  assert.equal(decision.allowed, true);
  assert.equal(next.hit('token:a').allowed, false, 'the sixth in the window is refused');
  assert.equal(next.hit('ip:192.0.2.1').remaining, 3);
});

test('counts of a window that has turned are not handed on, nor taken', () => {
  let now = 10 * MINUTE + 59_000;
  const old = new MemoryRateLimiter(5, () => now);
  for (let i = 0; i < 5; i++) old.hit('token:a');
  const counts = old.counted();
  now += 2000;
  assert.deepEqual(old.counted().counts, [], 'the old process, a window later, has none to give');
  const next = new MemoryRateLimiter(5, () => now);
  next.absorb(counts);
  assert.equal(next.hit('token:a').remaining, 4, 'a new window: the old counts are gone');
});

test('addresses handed on count against the cap on addresses: beyond it they share the overflow bucket', () => {
  const now = 3 * MINUTE;
  const old = new MemoryRateLimiter(1_000_000, () => now);
  for (let i = 0; i < MAX_ADDRESS_KEYS; i++) old.hit(`ip:a${i}`);
  const next = new MemoryRateLimiter(1_000_000, () => now);
  next.hit('ip:mine');
  next.absorb(old.counted());
  const counts = new Map(next.counted().counts);
  assert.equal(counts.size, MAX_ADDRESS_KEYS + 1, 'the cap, and the overflow bucket');
  assert.equal(counts.get('(overflow)'), 1, 'the one address beyond the cap');
  assert.equal(counts.get('ip:mine'), 1);
});
