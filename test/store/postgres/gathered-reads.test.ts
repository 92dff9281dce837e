import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type pg from 'pg';
import { PlantLookups, type LookupRow, type LookupSettings } from '../../../src/store/postgres/gathered-reads.js';
import type { QueryBy } from '../../../src/store/postgres/query.js';
import { StoreUnavailableError } from '../../../src/store/store.js';
import { until } from '../../toolkit.js';

/**
 * The gathered reads' rules, against a stand-in database that records every statement: how statements
 * form, which rows go to whom, deadlines and failures. (The real SQL runs in the store contract suite.)
 */

interface Sent {
  ids: string[];
  deadline: number;
}

/** Holds each statement until released; plants exist for even ids. */
function fakeDatabase(options: { fail?: (sent: Sent) => Error | undefined } = {}) {
  const sent: Sent[] = [];
  const waiting: (() => void)[] = [];
  const queryBy: QueryBy =
    (deadline) =>
    async <R extends pg.QueryResultRow>(_text: string, values: unknown[]) => {
      const entry: Sent = { ids: values[0] as string[], deadline };
      sent.push(entry);
      await new Promise<void>((resolve) => waiting.push(resolve));
      const error = options.fail?.(entry);
      if (error) throw error;
      const rows: LookupRow[] = entry.ids.filter((id) => BigInt(id) % 2n === 0n).map((id) => ({ id, name: `p${id}`, tag: null, version: '1' }));
      return { rows } as unknown as pg.QueryResult<R>;
    };
  const release = () => waiting.splice(0).forEach((resolve) => resolve());
  return { sent, queryBy, release };
}

const SETTINGS: LookupSettings = { maxInFlight: 1, maxBatch: 1000, timeoutMs: 5000 };
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('PostgreSQL reads by id, gathered (postgres/gathered-reads.ts)', () => {
  it('sends a lone read at once, and the reads that arrive meanwhile together, each id once', async () => {
    const db = fakeDatabase();
    const lookups = new PlantLookups(db.queryBy, SETTINGS);
    const first = lookups.get(2);
    await turn();
    assert.deepEqual(
      db.sent.map((s) => s.ids),
      [['2']],
    );
    const rest = [4, 5, 4, 2n ** 63n - 1n, -(2n ** 63n)].map((id) => lookups.get(id));
    await turn();
    assert.equal(db.sent.length, 1, 'nothing more is sent while a statement runs');
    db.release();
    assert.equal((await first)?.id, '2');
    await turn();
    assert.deepEqual(db.sent[1]?.ids, ['4', '5', '9223372036854775807', '-9223372036854775808']);
    db.release();
    const rows = await Promise.all(rest);
    assert.deepEqual(
      rows.map((row) => row?.id),
      ['4', undefined, '4', undefined, '-9223372036854775808'],
    );
  });

  it('splits what waits into statements of at most maxBatch ids, up to maxInFlight at once', async () => {
    const db = fakeDatabase();
    const lookups = new PlantLookups(db.queryBy, { ...SETTINGS, maxInFlight: 2, maxBatch: 3 });
    const reads = Array.from({ length: 7 }, (_, i) => lookups.get(i));
    await turn();
    assert.deepEqual(
      db.sent.map((s) => s.ids),
      [
        ['0', '1', '2'],
        ['3', '4', '5'],
      ],
    );
    db.release();
    await turn();
    await turn();
    assert.deepEqual(db.sent[2]?.ids, ['6']);
    db.release();
    assert.deepEqual(
      (await Promise.all(reads)).map((row) => row?.id),
      ['0', undefined, '2', undefined, '4', undefined, '6'],
    );
  });

  it('fails every read of a failed statement with its error, and the next statement goes on', async () => {
    const outage = new StoreUnavailableError('PostgreSQL: connection lost');
    const db = fakeDatabase({ fail: (sent) => (sent.ids.includes('2') ? outage : undefined) });
    const lookups = new PlantLookups(db.queryBy, SETTINGS);
    const failing = [lookups.get(2), lookups.get(3)];
    await turn();
    const next = lookups.get(4);
    db.release();
    for (const read of failing) await assert.rejects(read, (error) => error === outage);
    await turn();
    db.release();
    assert.equal((await next)?.id, '4');
  });

  it('ends a statement by its oldest read deadline, and does not send reads whose wait is over', async () => {
    const db = fakeDatabase();
    const lookups = new PlantLookups(db.queryBy, { ...SETTINGS, timeoutMs: 50 });
    const asked = Date.now();
    const first = lookups.get(2);
    await turn();
    assert.ok(db.sent[0]!.deadline >= asked + 50 && db.sent[0]!.deadline <= Date.now() + 50);
    const late = lookups.get(4);
    const lateAsked = Date.now();
    await until(() => Date.now() > lateAsked + 50, "the late read's 50 ms to pass");
    db.release();
    await first;
    await assert.rejects(late, (error) => error instanceof StoreUnavailableError && /DB_TIMEOUT_MS \(50 ms\)/.test(error.message));
    await turn();
    assert.equal(db.sent.length, 1, 'the expired read was not sent');
  });
});
