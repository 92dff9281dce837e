import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Dispatcher, type DispatcherSettings } from '../../src/webhooks/dispatcher.js';
import type { AttemptRecord, DueMessage, WebhookStore } from '../../src/store/webhook-store.js';
import { StoreUnavailableError } from '../../src/store/store.js';
import type { AttemptOutcome } from '../../src/webhooks/delivery.js';
import { sleep, until } from '../toolkit.js';

const quiet = { warn: () => undefined, debug: () => undefined, error: () => undefined };

/**
 * An outbox in memory holding `count` due messages: what the dispatcher asks of a store, recorded, each claim
 * with the time `clock` gives (Date.now() unless a test reads the dispatcher's own clock).
 */
function outbox(count: number, clock: () => number = () => Date.now()) {
  let made = 0;
  const message = (): DueMessage => {
    made++;
    return {
      seq: String(made),
      endpointId: 'ep_1',
      url: 'https://hooks.example/',
      secrets: ['whsec_x'],
      eventId: `msg_${made}`,
      payload: '{}',
      roundAttempts: 0,
    };
  };
  const due: DueMessage[] = Array.from({ length: count }, message);
  /** Each claim: what it asked for, and when (`clock`). */
  const claims: Array<{ limit: number; leaseMs: number; at: number }> = [];
  const released: string[] = [];
  const recorded: AttemptRecord[] = [];
  const store = {
    claimDue: (limit: number, leaseMs: number) => {
      claims.push({ limit, leaseMs, at: clock() });
      return Promise.resolve(due.splice(0, limit));
    },
    releaseClaims: (seqs: readonly string[]) => {
      released.push(...seqs);
      return Promise.resolve();
    },
    recordAttempts: (attempts: AttemptRecord[]) => {
      recorded.push(...attempts);
      return Promise.resolve();
    },
    deleteExpired: () => Promise.resolve(0),
    onQueued: () => undefined,
  } as unknown as WebhookStore;
  /** Queues one more due message, as a write would. */
  const queue = (): void => void due.push(message());
  return { store, claims, released, recorded, queue };
}

const settings = (concurrency: number): DispatcherSettings => ({
  concurrency,
  timeoutMs: 1000,
  retrySchedule: [1],
  disableAfterHours: 24,
  retentionDays: 7,
});

describe('dispatcher: claims ahead of the free slots', () => {
  it('claims in batches of up to twice its concurrency, never has more in flight than its concurrency, and sends each message once', async () => {
    const { store, claims, recorded } = outbox(100);
    let inFlight = 0;
    let most = 0;
    const sent: string[] = [];
    const sender = {
      send: async (message: DueMessage): Promise<AttemptOutcome> => {
        inFlight++;
        most = Math.max(most, inFlight);
        sent.push(message.seq);
        await sleep(1);
        inFlight--;
        return { status: 204, error: null };
      },
    };
    const dispatcher = new Dispatcher(store, sender, settings(4), quiet);
    dispatcher.start();
    await until(() => recorded.length === 100, 'every message to be recorded');
    await dispatcher.stop();
    assert.equal(recorded.length, 100);
    assert.deepEqual(
      [...sent].sort((a, b) => Number(a) - Number(b)),
      Array.from({ length: 100 }, (_, i) => String(i + 1)),
    );
    assert.equal(most, 4);
    assert.equal(claims[0]?.limit, 8, 'the first claim fills the slots and as many again');
    assert.ok(
      claims.every((c) => c.limit > 4),
      `each claim asks for more than the slots it fills: ${claims.map((c) => c.limit).join(' ')}`,
    );
    assert.ok(claims.length <= 25, `${claims.length} claims for 100 messages`);
    assert.ok(
      claims.every((c) => c.leaseMs > 2 * 1000),
      'each lease covers an attempt (twice the time-out) and the wait for a slot',
    );
  });

  it('gives back, when it stops, the messages it claimed and did not send', async () => {
    const { store, claims, released, recorded } = outbox(10);
    const waiting: Array<() => void> = [];
    const sent: string[] = [];
    const sender = {
      send: (message: DueMessage): Promise<AttemptOutcome> => {
        sent.push(message.seq);
        return new Promise((resolve) => waiting.push(() => resolve({ status: 204, error: null })));
      },
    };
    const dispatcher = new Dispatcher(store, sender, settings(2), quiet);
    dispatcher.start();
    await until(() => sent.length === 2, 'two messages to be sent');
    assert.deepEqual(
      claims.map((c) => c.limit),
      [4],
    );
    const stopped = dispatcher.stop(5000);
    for (const answer of waiting) answer();
    await stopped;
    assert.deepEqual(sent, ['1', '2']);
    assert.deepEqual(released, ['3', '4'], 'claimed, not sent: given back');
    assert.deepEqual(
      recorded.map((r) => r.seq),
      ['1', '2'],
      'the two in flight finished within the grace and were recorded',
    );
  });
});

describe('dispatcher: claims gathered while writes keep coming', () => {
  it('claims again no sooner than 10 ms after a claim that found few, however often writes wake it; a lone message after a quiet spell at once', async (t) => {
    // Each claim's time is the one the dispatcher read as it began it (its last Date.now() before it asks the
    // store), from which it counts the gap: read in the store instead, the clock could tick between the two
    // and a gap of 10 ms read as 9 (seen once in CI).
    const now = Date.now.bind(Date);
    let lastRead = 0;
    t.mock.method(Date, 'now', () => (lastRead = now()));
    const { store, claims, recorded, queue } = outbox(0, () => lastRead);
    const sender = { send: (): Promise<AttemptOutcome> => Promise.resolve({ status: 204, error: null }) };
    const dispatcher = new Dispatcher(store, sender, settings(32), quiet);
    dispatcher.start();
    assert.equal(claims.length, 1, 'a claim at the start, which finds nothing');
    // A write every millisecond or so, each waking the dispatcher, as a store's writes do.
    for (let i = 0; i < 40; i++) {
      queue();
      dispatcher.wake();
      await sleep(1);
    }
    await until(() => recorded.length === 40, 'every message to be sent and recorded');
    for (let i = 1; i < claims.length; i++) {
      const gap = claims[i]!.at - claims[i - 1]!.at;
      assert.ok(gap >= 10, `claim ${i + 1} began ${gap} ms after the one before, which found fewer than it asked for`);
    }

    // A quiet spell: no claim in the last 10 ms (the dispatcher also polls, every second).
    await sleep(30);
    while (Date.now() - claims[claims.length - 1]!.at < 10) await sleep(5);
    queue();
    const before = claims.length;
    dispatcher.wake();
    assert.equal(claims.length, before + 1, 'after a quiet spell a write is claimed at once');
    await until(() => recorded.length === 41, 'the lone message to be sent and recorded');
    await dispatcher.stop();
  });

  it('claims again at once after a claim that found as many as it asked for: a backlog is not held back', async (t) => {
    const { store, claims, recorded } = outbox(200);
    // The clock stands still: a claim held back by the gap would never begin.
    t.mock.method(Date, 'now', () => 1_800_000_000_000);
    const sender = { send: (): Promise<AttemptOutcome> => Promise.resolve({ status: 204, error: null }) };
    const dispatcher = new Dispatcher(store, sender, settings(4), quiet);
    dispatcher.start();
    const deadline = performance.now() + 10_000;
    while (recorded.length < 200 && performance.now() < deadline) await sleep(5);
    await dispatcher.stop();
    assert.equal(recorded.length, 200, 'every message sent and recorded, the clock standing still');
    assert.ok(claims.length >= 25, `${claims.length} claims of at most 8`);
  });
});

describe('dispatcher: a store that fails', () => {
  it('tries to claim again at the next wake-up, not at once: no spin, one warning a wake-up, and it resumes when the store does', async () => {
    const { store, recorded } = outbox(3);
    const working = store.claimDue.bind(store);
    let failing = true;
    let refusal = new Error('the store is unavailable');
    let claims = 0;
    store.claimDue = (limit, leaseMs) => {
      claims++;
      // Refused at the next turn, as a store's I/O would be (a refusal in the same turn would starve the timers).
      if (failing) return new Promise<never>((_resolve, reject) => setImmediate(() => reject(refusal)));
      return working(limit, leaseMs);
    };
    let warnings = 0;
    const log = { ...quiet, warn: () => void warnings++ };
    const sender = { send: (): Promise<AttemptOutcome> => Promise.resolve({ status: 204, error: null }) };
    const dispatcher = new Dispatcher(store, sender, settings(4), log);
    dispatcher.start();
    // Many turns of the event loop: a claim retried from its own failure would have run thousands of times.
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(claims, 1, 'one claim, at the start');
    assert.equal(warnings, 1);
    dispatcher.wake();
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(claims, 2, 'one more at the wake-up');
    assert.equal(warnings, 2);
    // An outage the store logged itself as it began (a full SQLite disk): not warned of at each wake-up.
    refusal = new StoreUnavailableError('SQLite: SQLITE_FULL', { reported: true });
    dispatcher.wake();
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(claims, 3);
    assert.equal(warnings, 2, 'no warning');
    failing = false;
    dispatcher.wake();
    await until(() => recorded.length === 3, 'the messages to be sent once the store is back');
    await dispatcher.stop();
    assert.equal(recorded.length, 3, 'sent once the store is back');
  });
});

describe('dispatcher: retries', () => {
  it('claims a retry when it falls due, not at the next poll a second apart', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: 1_800_000_000_000 });
    const { store, claims, recorded } = outbox(1);
    // The store holds a retried message back until it is due, as the outbox does.
    const later: Array<{ at: number; message: DueMessage }> = [];
    const claimDue = store.claimDue.bind(store);
    store.claimDue = async (limit, leaseMs) => [
      ...(await claimDue(limit, leaseMs)),
      ...later
        .splice(0)
        .filter((held) => held.at <= Date.now())
        .map((held) => held.message),
    ];
    const recordAttempts = store.recordAttempts.bind(store);
    store.recordAttempts = async (attempts, disableAfterMs) => {
      for (const a of attempts)
        if (a.outcome === 'retry')
          later.push({
            at: a.nextAttemptAt!,
            message: {
              seq: a.seq,
              endpointId: 'ep_1',
              url: 'https://hooks.example/',
              secrets: ['whsec_x'],
              eventId: 'msg_1',
              payload: '{}',
              roundAttempts: 1,
            },
          });
      return recordAttempts(attempts, disableAfterMs);
    };
    let sent = 0;
    const sender = {
      send: (): Promise<AttemptOutcome> => Promise.resolve(sent++ === 0 ? { status: 500, error: 'HTTP 500' } : { status: 204, error: null }),
    };
    // A 300 ms wait, no jitter: the retry falls due 300 ms after the first attempt; the poll comes at 1 s.
    const dispatcher = new Dispatcher(store, sender, { ...settings(4), retrySchedule: [0.3] }, quiet, undefined, () => 0);
    dispatcher.start();
    const settle = async () => {
      for (let i = 0; i < 20; i++) await Promise.resolve();
    };
    await settle();
    t.mock.timers.tick(10); // the attempt recorded (RECORD_DELAY_MS)
    await settle();
    assert.equal(recorded.length, 1);
    assert.equal(recorded[0]!.nextAttemptAt, 1_800_000_000_300);
    const before = claims.length;
    t.mock.timers.tick(300);
    await settle();
    assert.ok(claims.length > before, 'a claim when the retry fell due, 700 ms before the poll');
    t.mock.timers.tick(10);
    await settle();
    assert.deepEqual(
      recorded.map((r) => r.outcome),
      ['retry', 'delivered'],
    );
    await dispatcher.stop();
  });
});
