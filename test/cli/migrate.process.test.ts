import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import type { Migration } from '../../src/store/migration.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { openConnection, prepare } from '../../src/store/sqlite/connection.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { tempDir } from '../helpers.js';
import { cli } from '../process.js';
import { postgresBefore, sqliteBefore } from '../store/older-schema.js';
import { postgresUnavailableReason, TestPostgres } from '../store/postgres/pg-server.js';
import { needs } from '../toolkit.js';

/** `plant-store migrate`: brings a database's schema up to date and exits, saying what it applied; running it again changes nothing. */

test('migrate creates the schema, says it created the store, exits 0, and is idempotent', async () => {
  const file = join(tempDir(after), 'nested', 'x.db');
  const first = await cli(`file:${file}`, 'migrate');
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stdout, '');
  assert.equal(first.stderr, `created the sqlite store ${file}, with the current schema\n`, 'a new store said to be made, by its name');
  const second = await cli(`file:${file}`, 'migrate');
  assert.equal(second.code, 0, second.stderr);
  assert.equal(second.stderr, `the schema of the sqlite store ${file} is up to date\n`, 'nothing to do, said so');

  const db = openConnection(file, { readonly: true });
  try {
    const tables = prepare(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
    assert.ok(tables.includes('plants') && tables.includes('tokens'), String(tables));
    const versions = prepare(db, 'SELECT version FROM schema_migrations ORDER BY version').pluck().all() as number[];
    assert.ok(versions.length >= 1);
    assert.equal(new Set(versions).size, versions.length, 'each migration recorded once');
  } finally {
    db.close();
  }
});

/** The migrations from `name` on, as `plant-store migrate` names them: "migrations 9 (idempotency_outcomes), 10 (…)". */
function namedFrom(migrations: Migration[], name: string): string {
  const rest = migrations.slice(migrations.findIndex((m) => m.name === name));
  assert.ok(rest.length >= 2, `migrations from ${name} on`);
  return `migrations ${rest.map((m) => `${m.version} (${m.name})`).join(', ')}`;
}

describe('migrate on a store an earlier release left', () => {
  test('SQLite: names each migration it applied; run again, says the schema is up to date', async () => {
    const file = join(tempDir(after), 'older.db');
    const db = openConnection(file);
    sqliteBefore(db, 'idempotency_outcomes');
    db.close();
    // Private, as the service makes its files (else a warning about the mode comes first).
    chmodSync(file, 0o600);
    const first = await cli(`file:${file}`, 'migrate');
    assert.equal(first.code, 0, first.stderr);
    assert.match(namedFrom(SQLITE_MIGRATIONS, 'idempotency_outcomes'), /^migrations 9 \(idempotency_outcomes\), 10 \(webhook_int64_strings\)/);
    assert.equal(first.stderr, `applied ${namedFrom(SQLITE_MIGRATIONS, 'idempotency_outcomes')} to the sqlite store ${file}\n`);
    const second = await cli(`file:${file}`, 'migrate');
    assert.equal(second.stderr, `the schema of the sqlite store ${file} is up to date\n`);
  });

  const skip = needs('migrate on PostgreSQL', postgresUnavailableReason());
  test('PostgreSQL: names each migration it applied; run again, says the schema is up to date', { skip }, async () => {
    const postgres = await TestPostgres.start(after);
    const url = await postgres.createDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      // The schema as 1.0.0 left it: the migrations before `instances`.
      await postgresBefore(client, 'instances');
    } finally {
      await client.end();
    }
    const first = await cli(url, 'migrate');
    assert.equal(first.code, 0, first.stderr);
    // The URL has no password to hide: the store is named by it as it is.
    assert.equal(first.stderr, `applied ${namedFrom(POSTGRES_MIGRATIONS, 'instances')} to the postgres store ${url}\n`);
    const second = await cli(url, 'migrate');
    assert.equal(second.stderr, `the schema of the postgres store ${url} is up to date\n`);
  });
});

test('migrate with a DATABASE_URL that cannot be opened fails naming it', async () => {
  const dir = tempDir(after);
  writeFileSync(join(dir, 'text.db'), 'not a database '.repeat(100));
  const result = await cli(`file:${join(dir, 'text.db')}`, 'migrate');
  assert.equal(result.code, 1);
  assert.match(result.stderr, /^plant-store: DATABASE_URL/);
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
});
