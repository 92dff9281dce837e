import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { FEED_START } from '../../src/store/event-store.js';
import { openConnection, prepare } from '../../src/store/sqlite/connection.js';
import { openSqlite, tempDir } from '../helpers.js';
import { baseEnv, CLI_JS } from '../process.js';
import { until } from '../toolkit.js';

/**
 * `plant-store events tail` when its place is lost: its reader is slower than retention (the events after
 * what it printed are deleted while its output waits to be read), or the store's feed is replaced under it
 * (a restore, a failover that lost the last commits: new events numbered below its place). It must never
 * go on as though nothing were missing: it stops with exit 1, saying why, having skipped no event.
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

test('events tail stops (exit 1) when the feed is replaced under it (a restore), never skipping the new events', { timeout: 120_000 }, async () => {
  const dir = tempDir(after);
  const store = openSqlite(dir);
  after(() => store.close());
  for (let id = 1; id <= 3; id++) await store.plants.put({ id, name: `p${id}` });
  const before = (await store.events.read({ after: FEED_START, limit: 10 })).map((event) => event.id);
  const child = spawn(process.execPath, [CLI_JS, 'events', 'tail', '--after', before[0]!], {
    env: baseEnv({ DATABASE_URL: `file:${join(dir, 'plants.db')}`, EVENTS_POLL_MS: '20' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const printed = () => [...stdout.matchAll(/^\{"id":"(msg_\w+)"/gm)].map((m) => m[1]);
  await until(() => printed().length === 2, 'the events after the first');

  // The store as a backup taken after the first event left it; then writes go on.
  const db = openConnection(join(dir, 'plants.db'));
  try {
    prepare(db, 'DELETE FROM events WHERE position > (SELECT position FROM events WHERE id = ?)').run(before[0]!);
  } finally {
    db.close();
  }
  for (let id = 4; id <= 8; id++) await store.plants.put({ id, name: `p${id}` });
  const now = (await store.events.read({ after: FEED_START, limit: 10 })).map((event) => event.id);
  await until(() => child.exitCode !== null || stdout.includes(now.at(-1)!), 'the tail to stop, or to print the newest event');
  assert.deepEqual(printed(), before.slice(1), 'nothing printed after the feed was replaced');
  assert.equal(await exited, 1, stderr);
  assert.match(stderr, new RegExp(`event ${before[2]} is no longer in the feed \\(.*a restored database`));
});
