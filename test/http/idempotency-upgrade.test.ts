import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openConnection, prepare } from '../../src/store/sqlite/connection.js';
import type { Store } from '../../src/store/store.js';
import { assertError, openSqlite, tempDir, TEST_PG_ENV, testApp } from '../helpers.js';
import { postgresBefore, sqliteBefore } from '../store/older-schema.js';

/**
 * Answers kept by the release before outcomes, on either store (test/store/postgres/http.process.test.ts
 * runs this file again on PostgreSQL): the migration idempotency_outcomes keeps each one, and a retry
 * with its key gets it as it was kept, byte for byte, until it expires: nothing acknowledged is lost.
 * Their fingerprints are made here as that release made them (the recipe must not change).
 */

const MIGRATION = 'idempotency_outcomes';

/** An answer as the release before kept it, in its own columns. */
interface EarlierRow {
  key: string;
  fingerprint: string;
  status: number;
  headers: Record<string, string>;
  body: string;
  expiresAt: number;
}

/** A request's fingerprint as the release before made it: method, path, Content-Type, If-Match, If-None-Match, body. */
function fingerprint(path: string, body = '', contentType = body === '' ? '' : 'application/json'): string {
  return createHash('sha256').update(`POST\n${path}\n${contentType}\n\n\n`).update(body).digest('base64url');
}

/** A store as the release before left it, holding these answers of `owner`'s, opened by this one (which migrates it). */
async function upgraded(owner: string, rows: EarlierRow[]): Promise<Store> {
  const values = (row: EarlierRow) => [owner, row.key, row.fingerprint, row.status, JSON.stringify(row.headers), row.body, row.expiresAt];
  const columns = 'owner, key, fingerprint, status, headers, body, expires_at';
  const pgAdminUrl = process.env[TEST_PG_ENV];
  if (pgAdminUrl) {
    const [{ default: pg }, { PostgresStore }, { createDatabase }] = await Promise.all([
      import('pg'),
      import('../../src/store/postgres/store.js'),
      import('../store/postgres/pg-server.js'),
    ]);
    const url = await createDatabase(pgAdminUrl);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await postgresBefore(client, MIGRATION);
      for (const row of rows) await client.query(`INSERT INTO idempotency_keys (${columns}) VALUES ($1, $2, $3, $4, $5, $6, $7)`, values(row));
    } finally {
      await client.end();
    }
    return PostgresStore.open(url, { poolSize: 4, readPoolSize: 2, timeoutMs: 5000 });
  }
  const dir = tempDir(after);
  const db = openConnection(join(dir, 'plants.db'));
  sqliteBefore(db, MIGRATION);
  for (const row of rows) prepare(db, `INSERT INTO idempotency_keys (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?)`).run(...values(row));
  db.close();
  return openSqlite(dir);
}

const JSON_TYPE = 'application/json; charset=utf-8';

describe('answers kept by the release before outcomes', () => {
  it('are replayed as kept after the upgrade, until they expire; another request with the key is 422', async () => {
    const owner = (await (await testApp(after)).call('GET', '/token')).json<{ id: string }>().id;
    const later = Date.now() + 3_600_000;
    const put = '{"id":1,"name":"Fern"}';
    const store = await upgraded(owner, [
      {
        key: 'put',
        fingerprint: fingerprint('/plants', put),
        status: 200,
        headers: { 'content-type': JSON_TYPE, etag: '"7"' },
        body: '{"name":"Fern"}',
        expiresAt: later,
      },
      {
        key: 'gone',
        fingerprint: fingerprint('/webhooks/ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C/rotate-secret'),
        status: 404,
        headers: { 'content-type': JSON_TYPE },
        body: '{"error":404,"message":"no webhook endpoint with id ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C"}',
        expiresAt: later,
      },
      {
        key: 'expired',
        fingerprint: fingerprint('/plants', '{"id":2,"name":"Moss"}'),
        status: 200,
        headers: { 'content-type': JSON_TYPE, etag: '"3"' },
        body: '{"name":"Moss"}',
        expiresAt: Date.now() - 1000,
      },
      { key: 'swept', fingerprint: 'x', status: 200, headers: {}, body: '', expiresAt: Date.now() - 1000 },
    ]);
    const t = await testApp(after, { store });
    const post = (path: string, key: string, body?: string) => t.call('POST', path, { body, headers: { 'idempotency-key': key } });

    assert.equal(await t.store.idempotency.count(), 2, 'the unexpired answers');
    const replay = await post('/plants', 'put', put);
    assert.deepEqual(
      [replay.statusCode, replay.payload, replay.headers.etag, replay.headers['content-type'], replay.headers['idempotent-replayed']],
      [200, '{"name":"Fern"}', '"7"', JSON_TYPE, 'true'],
    );
    assert.equal((await t.call('GET', '/plants/1')).statusCode, 404, 'nothing written again');
    const missing = await post('/webhooks/ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C/rotate-secret', 'gone');
    // As the release before kept it: without the code this release adds.
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(
      [missing.payload, missing.headers['idempotent-replayed']],
      ['{"error":404,"message":"no webhook endpoint with id ep_01JDQ7R6ZP3N2XW9K4T8VB5M0C"}', 'true'],
    );
    assertError(await post('/plants', 'put', '{"id":1,"name":"Ivy"}'), 422, 'Idempotency-Key "put" was used for another request');

    // Expired: the request runs, and its outcome is kept under the key now.
    const ran = await post('/plants', 'expired', '{"id":2,"name":"Moss"}');
    assert.deepEqual([ran.statusCode, ran.headers['idempotent-replayed']], [200, undefined]);
    assert.equal((await t.call('GET', '/plants/2')).statusCode, 200);
    assert.equal((await post('/plants', 'expired', '{"id":2,"name":"Moss"}')).headers['idempotent-replayed'], 'true');
    assert.equal(await t.store.idempotency.count(), 3);
    assert.equal(await t.store.idempotency.deleteExpired(10), 1, 'the expired answer swept');
    assert.equal(await t.store.idempotency.count(), 3);
  });
});
