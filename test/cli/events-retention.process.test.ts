import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { FEED_START } from '../../src/store/event-store.js';
import { openSqlite, tempDir } from '../helpers.js';
import { baseEnv, CLI_JS } from '../process.js';
import { until } from '../toolkit.js';

/**
 * `plant-store events tail` whose reader is slower than retention: the events after what it printed are
 * deleted while its output waits to be read. It must never go on past them as though nothing were missing:
 * it stops with exit 1, saying the place is no longer in the feed, having printed no event out of order.
 */
test('events tail stops (exit 1) when retention deletes the events after its place, never skipping them', { timeout: 120_000 }, async () => {
  const dir = tempDir(after);
  const store = openSqlite(dir);
  after(() => store.close());
  const importing = await store.plants.startImport();
  await importing.add(Array.from({ length: 5000 }, (_, i) => ({ id: i, name: `a plant of the catalogue, number ${i}` })));
  await importing.commit({ createOnly: false });
  const ids = (await store.events.read({ after: FEED_START, limit: 10_000 })).map((event) => event.id);

  const child = spawn(process.execPath, [CLI_JS, 'events', 'tail', '--after', ids[0]!], {
    env: baseEnv({ DATABASE_URL: `file:${join(dir, 'plants.db')}`, EVENTS_POLL_MS: '50' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  // Nobody reads its output yet: it prints its first page into the pipe, which fills, and waits.
  child.stdout.pause();
  await until(() => stderr.includes('following the events after'), 'the tail to start');
  await until(() => child.stdout.readableLength > 0, 'its first lines');

  // Retention: every event but the newest (once the search index has read them all).
  const written = Date.now();
  await until(() => Date.now() > written, 'the clock to pass the last write');
  await until(async () => {
    await store.events.deleteExpired(Date.now() + 60_000);
    return (await store.events.read({ after: FEED_START, limit: 2 })).length === 1;
  }, 'every event but the newest to be deleted');

  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stdout.resume();
  await until(() => child.exitCode !== null || stdout.includes(ids.at(-1)!), 'the tail to stop, or to print the newest event');
  const printed = stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { id: string }).id);
  assert.deepEqual(printed, ids.slice(1, printed.length + 1), 'the events after --after, in order, none skipped');
  assert.equal(await exited, 1, stderr);
  assert.match(stderr, new RegExp(`event ${printed.at(-1)} is no longer in the feed`));
});
