import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { openConnection, prepare } from '../../src/store/sqlite/connection.js';
import type { Store } from '../../src/store/store.js';
import { openSqlite, tempDir, testApp, TEST_PG_ENV, TOKEN, type TestApp } from '../helpers.js';
import { listen, openSource } from './sse.js';
import { until } from '../toolkit.js';

/**
 * The store's change feed replaced under open streams: a database restored from a backup, or a standby
 * promoted without the last commits (asynchronous replication). The new feed numbers its commits again from
 * an earlier place than the streams have read, so a stream that read on after its place would skip, without
 * a word, every new event numbered below it. Instead every stream ends, and its client's reconnect resumes
 * after its last event in the feed as it is now: here 410, that event being gone. Runs on PostgreSQL too.
 */

/** A store, and a way to take its feed back to where it was when event `id` was the newest, as a restore would. */
async function rollbackableStore(): Promise<{ store: Store; rollBackTo: (id: string) => Promise<void> }> {
  const pgAdminUrl = process.env[TEST_PG_ENV];
  if (pgAdminUrl) {
    const [{ PostgresStore }, { createMigratedDatabase }, { default: pg }] = await Promise.all([
      import('../../src/store/postgres/store.js'),
      import('../store/postgres/pg-server.js'),
      import('pg'),
    ]);
    const url = await createMigratedDatabase(pgAdminUrl);
    const store = await PostgresStore.open(url, { poolSize: 4, readPoolSize: 2, timeoutMs: 5000 });
    return {
      store,
      rollBackTo: async (id) => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          await client.query(
            `WITH gone AS (DELETE FROM event_commits WHERE csn > (SELECT c.csn FROM events e JOIN event_commits c ON c.key = e.key WHERE e.id = $1) RETURNING key)
             DELETE FROM events WHERE key IN (SELECT key FROM gone)`,
            [id],
          );
          await client.query(`SELECT setval('event_commit_order', (SELECT max(csn) FROM event_commits))`);
        } finally {
          await client.end();
        }
      },
    };
  }
  const dir = tempDir(after);
  const store = openSqlite(dir);
  return {
    store,
    rollBackTo: (id) => {
      const db = openConnection(join(dir, 'plants.db'));
      try {
        const position = prepare<[string], number>(db, 'SELECT position FROM events WHERE id = ?').pluck().get(id)!;
        prepare(db, 'DELETE FROM events WHERE position > ?').run(position);
        prepare(db, "UPDATE counters SET value = min(value, ?) WHERE name = 'search_position'").run(position);
      } finally {
        db.close();
      }
      return Promise.resolve();
    },
  };
}

async function post(t: TestApp, id: number): Promise<void> {
  const res = await t.call('POST', '/plants', { body: `{"id":${id},"name":"p${id}"}` });
  assert.equal(res.statusCode, 200, res.payload);
}

it('ends the open streams when the feed is replaced under them, never skipping its new events; a reconnect after a lost event is 410', async (context) => {
  const { store, rollBackTo } = await rollbackableStore();
  let emptyFollowerReads = 0;
  const read = store.events.read.bind(store.events);
  store.events.read = async (options) => {
    const page = await read(options);
    if (options.limit === 1000 && page.length === 0) emptyFollowerReads++;
    return page;
  };
  const t = await testApp(after, { store, config: { eventsPollMs: 20, eventsRetryMs: 10 } });
  for (let id = 1; id <= 3; id++) await post(t, id);
  const before = (await store.events.read({ after: { commit: 0, index: 0 }, limit: 10 })).map((event) => event.id);
  const origin = await listen(t.app);
  const client = openSource(context.after.bind(context), `${origin}/events?after=${before[2]}`, TOKEN);
  for (let id = 4; id <= 6; id++) await post(t, id);
  await until(() => client.received.length === 3, 'the events after the third');
  const received = client.received.map((event) => event.id);
  // The feed's reader has read all there was (a read of its pages, 1000, that found nothing) since: a restore
  // comes with an outage, and the reader checks its place once it is back; here it has been idle instead.
  const idleReads = emptyFollowerReads;
  await until(() => emptyFollowerReads > idleReads, 'the feed to find nothing more to read');

  // Restored to a backup taken when the second event was the newest; then writes go on.
  await rollBackTo(before[1]!);
  for (let id = 7; id <= 12; id++) await post(t, id);
  const now = (await store.events.read({ after: { commit: 0, index: 0 }, limit: 20 })).map((event) => event.id);
  assert.deepEqual(now.slice(0, 2), before.slice(0, 2));
  assert.equal(now.length, 8);

  await until(
    () => client.statuses.includes(410) || client.received.some((event) => event.id === now.at(-1)),
    'the stream to end and its reconnect to be refused',
  );
  assert.deepEqual(
    client.received.map((event) => event.id),
    received,
    'no event of the new feed after a gap',
  );
  assert.deepEqual(client.statuses, [200, 410]);
  assert.equal(client.connections.at(-1)!['Last-Event-ID'], received.at(-1));
});
