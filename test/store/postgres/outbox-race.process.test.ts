import assert from 'node:assert/strict';
import { after, describe, it, test } from 'node:test';
import pg from 'pg';
import { EVENT_TYPES } from '../../../src/model/event-types.js';
import { newId } from '../../../src/model/ids.js';
import { PostgresStore } from '../../../src/store/postgres/store.js';
import { postgresUnavailableReason, TestPostgres } from './pg-server.js';
import { needs, until } from '../../toolkit.js';

/**
 * A plant write racing a webhook endpoint's deletion on PostgreSQL: the write's statement reads the
 * subscribed endpoints and inserts one outbox message each. Deleted by a transaction that commits while the
 * write waits, the endpoint is passed over and the write succeeds; before, the outbox's foreign key found
 * it gone and failed the whole write (a 500, seen under load in the rolling upgrade test).
 */

const skipReason = needs('the outbox and an endpoint deleted meanwhile', postgresUnavailableReason());

if (skipReason) {
  test('the outbox and an endpoint deleted meanwhile', { skip: skipReason }, () => {});
} else {
  const server = await TestPostgres.start(after);

  describe('a plant write while an endpoint it would notify is being deleted', () => {
    for (const [what, write] of [
      ['a create', (store: PostgresStore) => store.plants.put({ id: 1, name: 'raced' })],
      [
        'an import',
        async (store: PostgresStore) => {
          const session = await store.plants.startImport();
          await session.add([{ id: 2, name: 'imported' }]);
          await session.commit({ createOnly: false });
        },
      ],
    ] as const) {
      it(`${what} succeeds, and queues nothing for the endpoint gone`, async () => {
        const url = await server.createDatabase();
        const store = await PostgresStore.open(url, { poolSize: 2, readPoolSize: 1, timeoutMs: 30_000 });
        after(() => store.close());
        const endpoint = await store.webhooks.createEndpoint({
          id: newId('ep'),
          url: 'https://hooks.example/plants',
          events: [...EVENT_TYPES],
          secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTAx',
          createdAt: Date.now(),
        });
        const [deleter, observer] = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })];
        await Promise.all([deleter.connect(), observer.connect()]);
        after(() => Promise.all([deleter.end(), observer.end()]));
        // The deletion holds the endpoint's row until it commits; the write reaches it meanwhile and waits.
        await deleter.query('BEGIN');
        await deleter.query('DELETE FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
        const written = write(store);
        await until(async () => {
          const { rows } = await observer.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'plant-store/%' AND wait_event_type = 'Lock'",
          );
          return rows[0]!.n >= 1;
        }, 'the write to wait for the deletion');
        await deleter.query('COMMIT');
        await written;
        const { rows } = await observer.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_messages');
        assert.equal(rows[0]!.n, 0, 'no message for the endpoint deleted');
        assert.equal(await store.plants.count(), 1, 'the plant is stored');
      });
    }
  });
}
