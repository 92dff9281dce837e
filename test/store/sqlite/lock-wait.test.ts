import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { openConnection } from '../../../src/store/sqlite/connection.js';
import { SqliteStore } from '../../../src/store/sqlite/store.js';
import { StoreUnavailableError } from '../../../src/store/store.js';
import { tempDir } from '../../helpers.js';
import { sleep } from '../../toolkit.js';

/**
 * DB_TIMEOUT_MS (busyTimeoutMs here) bounds a write's whole wait while another process holds the file's
 * write lock: a write queued behind a batch that waits for the lock waits only what is left of its own
 * DB_TIMEOUT_MS, not a whole one more from when that batch gives up (up to twice as long, then
 * committed and acknowledged to a client that had given up). And a write refused is not committed later.
 */
it('a write queued behind a batch waiting for the lock is refused within its own DB_TIMEOUT_MS, and never committed', async () => {
  const timeoutMs = 3000;
  const path = join(tempDir(after), 'p.db');
  const store = SqliteStore.open(`file:${path}`, { synchronous: 'FULL', busyTimeoutMs: timeoutMs });
  after(() => store.close());
  await store.plants.put({ id: 1, name: 'before' });

  // Another process's transaction (the CLI's, an import's) holds the write lock.
  const holder = openConnection(path);
  after(() => holder.close());
  holder.exec('BEGIN IMMEDIATE');

  // The first write's batch waits for the lock; the second arrives a second later and queues behind it.
  const settled = (promise: Promise<unknown>) => {
    const outcome = { done: false, error: undefined as unknown };
    promise.then(
      () => (outcome.done = true),
      (error: unknown) => Object.assign(outcome, { done: true, error }),
    );
    return outcome;
  };
  const first = settled(store.plants.put({ id: 10, name: 'first' }));
  await sleep(1000);
  const second = settled(store.plants.put({ id: 11, name: 'second' }));
  // The lock is released a second after the second write's DB_TIMEOUT_MS is over, and a second before it
  // would be over had its batch waited a whole DB_TIMEOUT_MS after the first's (the seconds: a loaded machine).
  await sleep(timeoutMs + 1000);
  const answeredBeforeRelease = second.done;
  holder.exec('ROLLBACK');

  assert.ok(first.done && first.error instanceof StoreUnavailableError, `the first: ${String(first.error)}`);
  assert.ok(answeredBeforeRelease, 'the second was answered within its DB_TIMEOUT_MS, before the lock was released');
  assert.ok(second.error instanceof StoreUnavailableError, `the second: ${String(second.error)}`);
  // Refused, and not committed since: the next write commits, and neither refused write is there.
  await store.plants.put({ id: 2, name: 'after' });
  assert.equal((await store.plants.get(2))?.plant.name, 'after');
  assert.equal(await store.plants.get(10), undefined);
  assert.equal(await store.plants.get(11), undefined);
});
