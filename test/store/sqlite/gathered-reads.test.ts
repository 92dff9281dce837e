import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TurnReads } from '../../../src/store/sqlite/gathered-reads.js';

/** The reads of one turn, run together at its end (gathered-reads.ts). */

class Outage extends Error {}
const translate = (error: unknown) => new Outage(`translated: ${(error as Error).message}`);
/** Runs the reads as they are, as a transaction would run them (the store passes a read transaction). */
const direct = (reads: () => void) => reads();

describe('reads gathered per turn of the event loop (gathered-reads.ts)', () => {
  it('runs the reads asked in one turn after it, together and in the order asked', async () => {
    const reads = new TurnReads(translate, direct);
    const ran: number[] = [];
    const asked = [1, 2, 3].map((n) => reads.run(() => (ran.push(n), n * 10)));
    assert.deepEqual(ran, [], 'nothing runs while the turn goes on');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(ran, [1, 2, 3]);
    assert.deepEqual(await Promise.all(asked), [10, 20, 30]);
  });

  it('fails only the read that threw, with the translated error', async () => {
    const reads = new TurnReads(translate, direct);
    const [before, failing, after] = [
      reads.run(() => 'a'),
      reads.run(() => {
        throw new Error('SQLITE_IOERR');
      }),
      reads.run(() => 'c'),
    ];
    assert.equal(await before, 'a');
    await assert.rejects(failing, (error) => error instanceof Outage && error.message === 'translated: SQLITE_IOERR');
    assert.equal(await after, 'c');
  });

  it('runs a read asked by the continuation of another in a later turn, and sees state changed in between', async () => {
    const reads = new TurnReads(translate, direct);
    let state = 'old';
    const first = await reads.run(() => state);
    state = 'new';
    const second = await reads.run(() => state);
    assert.deepEqual([first, second], ['old', 'new']);
    // Many turns in a row: every read is answered.
    let total = 0;
    for (let i = 0; i < 100; i++) total += await reads.run(() => i);
    assert.equal(total, 4950);
  });

  it('runs the reads of one turn together, in one call of `together` (one read transaction), and a lone read outside it', async () => {
    const batches: number[][] = [];
    let current: number[] | undefined;
    const reads = new TurnReads(translate, (run) => {
      current = [];
      run();
      batches.push(current);
      current = undefined;
    });
    const asked = [1, 2, 3].map((n) => reads.run(() => (current?.push(n), n)));
    assert.deepEqual(await Promise.all(asked), [1, 2, 3]);
    assert.deepEqual(batches, [[1, 2, 3]]);
    let inside: boolean | undefined;
    await reads.run(() => (inside = current !== undefined));
    assert.equal(inside, false, 'a lone read needs no transaction of its own');
  });

  it('fails every read of the turn, translated, when their transaction cannot begin', async () => {
    const reads = new TurnReads(translate, () => {
      throw new Error('SQLITE_CANTOPEN');
    });
    const asked = [reads.run(() => 1), reads.run(() => 2)];
    for (const read of asked) await assert.rejects(read, (error) => error instanceof Outage && error.message === 'translated: SQLITE_CANTOPEN');
  });

  it('keeps the answers of reads that ran when their transaction fails to end', async () => {
    const reads = new TurnReads(translate, (run) => {
      run();
      throw new Error('SQLITE_BUSY');
    });
    assert.deepEqual(await Promise.all([reads.run(() => 'a'), reads.run(() => 'b')]), ['a', 'b']);
  });
});
