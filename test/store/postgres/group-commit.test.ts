import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { PostgresWriteBatcher, type BatchSettings } from '../../../src/store/postgres/group-commit.js';
import type { Query, QueryBy, Transaction } from '../../../src/store/postgres/query.js';
import { StoreBusyError, StoreUnavailableError } from '../../../src/store/store.js';
import type { StoredPlant } from '../../../src/model/plant.js';
import { sleep, until } from '../../toolkit.js';

/**
 * The group commit's rules, against a stand-in database that records every statement: how batches form,
 * how a batch is split into statements, deadlines, the queue limit, retries and failures. (The real SQL
 * runs in the store contract suite on PostgreSQL.)
 */

interface Sent {
  /** 'alone' or the transaction's number. */
  via: string;
  kind: 'plain-puts' | 'other' | 'commit' | 'lock';
  /** The plants written (lock: locked), or (commit) the key of the transaction's events. */
  ids: string[];
  /** A write's events: the key it was given (null: take one) and how many events came before it in its transaction. */
  feed?: [string | null, number];
}

/**
 * Answers the plain-puts statement (one row per plant, "created"), any other write ("created", one row),
 * each with the events key "7", and the change feed's commit statement.
 */
function fakeDatabase(
  options: { stall?: (sent: Sent) => Promise<void> | undefined; fail?: (sent: Sent, attempt: number) => Error | undefined } = {},
) {
  const sent: Sent[] = [];
  let transactions = 0;
  let attempts = 0;
  const run =
    (via: string): Query =>
    async <R extends pg.QueryResultRow>(text: string, values: unknown[]) => {
      const plain = text.includes('WITH ORDINALITY');
      const commit = text.startsWith('INSERT INTO event_commits');
      if (text.startsWith('SELECT 1 FROM plants')) {
        sent.push({ via, kind: 'lock', ids: values[0] as string[] });
        return { rows: [] } as unknown as pg.QueryResult<R>;
      }
      const ids = plain ? (values[0] as string[]) : [String(values[0])];
      const entry: Sent = commit
        ? { via, kind: 'commit', ids }
        : { via, kind: plain ? 'plain-puts' : 'other', ids, feed: [values.at(-2) as string | null, values.at(-1) as number] };
      sent.push(entry);
      await options.stall?.(entry);
      const error = options.fail?.(entry, ++attempts);
      if (error) throw error;
      const row = { version: '1', queued: 0, event_key: '7' };
      const rows = commit ? [] : plain ? ids.map(() => ({ ...row, inserted: true })) : [{ ...row, deleted: 1 }];
      return { rows } as unknown as pg.QueryResult<R>;
    };
  const deadlines: number[] = [];
  const queryBy: QueryBy = (deadline) => (deadlines.push(deadline), run('alone'));
  const transaction: Transaction = async (work, deadline) => {
    deadlines.push(deadline ?? NaN);
    return work(run(`tx${++transactions}`));
  };
  return { sent, queryBy, transaction, deadlines };
}

const SETTINGS: BatchSettings = { maxInFlight: 1, queueLimit: 100, maxBatch: 1000, timeoutMs: 5000 };
const plant = (id: number, name = `p${id}`): StoredPlant => ({ id, name });
const put = (id: number) => ({ kind: 'put' as const, plant: plant(id), createOnly: false, ifMatch: undefined });

describe('PostgreSQL group commit (postgres/group-commit.ts)', () => {
  it('sends a lone write at once, and the writes that arrive meanwhile together, as one multi-row statement', async () => {
    const db = fakeDatabase();
    const batcher = new PostgresWriteBatcher(
      db.queryBy,
      db.transaction,
      SETTINGS,
      () => undefined,
      () => undefined,
    );
    const first = batcher.write(put(1));
    await new Promise((resolve) => setImmediate(resolve));
    const rest = [2, 3, 4, 5].map((id) => batcher.write(put(id)));
    await Promise.all([first, ...rest]);
    assert.deepEqual(db.sent, [
      { via: 'alone', kind: 'plain-puts', ids: ['1'], feed: [null, 0] },
      { via: 'alone', kind: 'plain-puts', ids: ['2', '3', '4', '5'], feed: [null, 0] },
    ]);
  });

  it('splits a batch, in order, where a plant repeats or another kind of write comes, all in one transaction, its events numbered on and its place in the feed taken last', async () => {
    const db = fakeDatabase();
    const batcher = new PostgresWriteBatcher(
      db.queryBy,
      db.transaction,
      SETTINGS,
      () => undefined,
      () => undefined,
    );
    await Promise.all([
      batcher.write(put(1)),
      batcher.write(put(2)),
      batcher.write(put(1)),
      batcher.write({ kind: 'delete', id: 2, ifMatch: undefined }),
      batcher.write(put(3)),
      batcher.write({ kind: 'put', plant: plant(4), createOnly: true, ifMatch: undefined }),
    ]);
    assert.deepEqual(db.sent, [
      // First the plants of the batch's statements locked, in id order (the statement sorts them).
      { via: 'tx1', kind: 'lock', ids: ['1', '2', '3', '4'] },
      { via: 'tx1', kind: 'plain-puts', ids: ['1', '2'], feed: [null, 0] },
      { via: 'tx1', kind: 'plain-puts', ids: ['1'], feed: ['7', 2] },
      { via: 'tx1', kind: 'other', ids: ['2'], feed: ['7', 3] },
      { via: 'tx1', kind: 'plain-puts', ids: ['3'], feed: ['7', 4] },
      { via: 'tx1', kind: 'other', ids: ['4'], feed: ['7', 5] },
      { via: 'tx1', kind: 'commit', ids: ['7'] },
    ]);
  });

  it('keeps at most maxInFlight batches committing, and at most maxBatch writes in one', async () => {
    let inFlight = 0;
    let most = 0;
    const db = fakeDatabase({
      stall: async () => {
        most = Math.max(most, ++inFlight);
        await sleep(5);
        inFlight--;
      },
    });
    const batcher = new PostgresWriteBatcher(
      db.queryBy,
      db.transaction,
      { ...SETTINGS, maxInFlight: 2, maxBatch: 7 },
      () => undefined,
      () => undefined,
    );
    await Promise.all(Array.from({ length: 50 }, (_, i) => batcher.write(put(i))));
    assert.equal(most, 2);
    assert.ok(db.sent.every((s) => s.ids.length <= 7));
    assert.deepEqual(
      db.sent.flatMap((s) => s.ids).sort((a, b) => Number(a) - Number(b)),
      Array.from({ length: 50 }, (_, i) => String(i)),
    );
  });

  it('refuses a write at once beyond the queue limit, as busy', async () => {
    const db = fakeDatabase({ stall: () => sleep(20) });
    const batcher = new PostgresWriteBatcher(
      db.queryBy,
      db.transaction,
      { ...SETTINGS, queueLimit: 3 },
      () => undefined,
      () => undefined,
    );
    const accepted = [1, 2, 3].map((id) => batcher.write(put(id)));
    await assert.rejects(batcher.write(put(4)), StoreBusyError);
    await Promise.all(accepted);
    await batcher.write(put(5));
  });

  it('ends a batch by its oldest write’s deadline, and fails a write whose wait ran out in the queue without sending it', async () => {
    let release: () => void = () => undefined;
    const db = fakeDatabase({ stall: (s) => (s.ids[0] === '1' ? new Promise<void>((resolve) => (release = resolve)) : undefined) });
    const batcher = new PostgresWriteBatcher(
      db.queryBy,
      db.transaction,
      { ...SETTINGS, timeoutMs: 50 },
      () => undefined,
      () => undefined,
    );
    const stuck = batcher.write(put(1));
    await new Promise((resolve) => setImmediate(resolve));
    const asked = Date.now();
    const late = batcher.write(put(2));
    assert.ok(db.deadlines[0]! - asked <= 50, 'the first batch ends by its write’s deadline');
    await until(() => Date.now() > asked + 50, "the late write's 50 ms to pass");
    release();
    await stuck;
    await assert.rejects(late, StoreUnavailableError);
    assert.deepEqual(
      db.sent.map((s) => s.ids),
      [['1']],
      'the expired write was never sent',
    );
  });

  it('runs a batch again after a deadlock, and fails every write of a batch that fails', async () => {
    const deadlock = Object.assign(new pg.DatabaseError('deadlock detected', 0, 'error'), { code: '40P01' });
    const db = fakeDatabase({ fail: (_sent, attempt) => (attempt === 1 ? new StoreUnavailableError('deadlock', { cause: deadlock }) : undefined) });
    const batcher = new PostgresWriteBatcher(
      db.queryBy,
      db.transaction,
      SETTINGS,
      () => undefined,
      () => undefined,
    );
    assert.deepEqual(await batcher.write(put(1)), { outcome: 'created', version: 1 });
    assert.equal(db.sent.length, 2, 'sent twice');

    const broken = fakeDatabase({ fail: () => new Error('boom') });
    const failing = new PostgresWriteBatcher(
      broken.queryBy,
      broken.transaction,
      SETTINGS,
      () => undefined,
      () => undefined,
    );
    const results = await Promise.allSettled([failing.write(put(1)), failing.write(put(2)), failing.write(put(3))]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected', 'rejected'],
    );
    assert.equal(broken.sent.length, 1, 'a failure that is not a deadlock is not retried');
  });
});
