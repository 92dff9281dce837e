import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { startServer } from '../process.js';
import { AutoFailover, autoFailoverUnavailableReason } from '../store/postgres/pg-auto-failover.js';
import { postgresUnavailableReason } from '../store/postgres/pg-server.js';
import { TOKEN } from './crash-workload.js';
import { assertAllOn, assertRodeThrough, writeThroughFailover } from './failover-workload.js';
import { needs, until } from '../toolkit.js';

/**
 * The same failover with a real orchestrator: pg_auto_failover (monitor, primary, secondary on
 * loopback) notices the primary's node gone, promotes the secondary and, once the old primary is
 * surely demoted, lets it take writes. The service has the connection string pg_auto_failover gives
 * (every node, target_session_attrs=read-write) and is left alone.
 */
const skip = needs('the pg_auto_failover test', postgresUnavailableReason() ?? autoFailoverUnavailableReason());
const DB_TIMEOUT_MS = 1500;

/** Whether the server on `port` takes writes: a primary, and not held read-only. */
async function takesWrites(port: number): Promise<boolean> {
  const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/plants`, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ writable: boolean }>(
      "SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off' AS writable",
    );
    return rows[0]!.writable;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe('PostgreSQL failover by pg_auto_failover', { skip }, () => {
  test(
    'the primary node SIGKILLed under writes, pg_auto_failover promotes the secondary: only 200 and 503, every acknowledged plant kept',
    { timeout: 3 * 60_000 },
    async (t) => {
      const formationStarted = Date.now();
      const formation = await AutoFailover.start(after);
      const formationMs = Date.now() - formationStarted;
      const uri = await formation.uri();
      assert.match(uri, /target_session_attrs=read-write/);
      // pg_auto_failover replicates synchronously once the secondary is up: acknowledged means on both.
      const primary = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${formation.port('node1')}/plants` });
      await primary.connect();
      const { rows } = await primary.query<{ names: string }>("SELECT current_setting('synchronous_standby_names') AS names");
      await primary.end();
      assert.notEqual(rows[0]!.names, '', 'synchronous_standby_names is set');

      const service = await startServer(after, {
        env: { DATABASE_URL: uri, PLANT_STORE_TOKENS: TOKEN, DB_TIMEOUT_MS: String(DB_TIMEOUT_MS), WEB_CONCURRENCY: '1' },
      });
      const run = await writeThroughFailover(service, async () => {
        await formation.kill('node1');
        await until(() => takesWrites(formation.port('node2')), 'pg_auto_failover to promote node2', { timeoutMs: 60_000, everyMs: 50 });
      });
      assert.ok(service.running, 'the service rode through without a restart');
      const figures = assertRodeThrough(run, DB_TIMEOUT_MS);
      const stored = await assertAllOn(`postgres://postgres@127.0.0.1:${formation.port('node2')}/plants`, run.known);
      t.diagnostic(
        `formation up in ${formationMs} ms; ${figures}; ${stored} plants on node2, every acknowledged one; states ${JSON.stringify(await formation.states())}`,
      );
      await service.stop('SIGTERM');
    },
  );
});
