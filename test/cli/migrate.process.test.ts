import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openConnection, prepare } from '../../src/store/sqlite/connection.js';
import { tempDir } from '../helpers.js';
import { cli } from '../process.js';

/** `plant-store migrate`: brings a database's schema up to date and exits; running it again changes nothing. */

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

test('migrate with a DATABASE_URL that cannot be opened fails naming it', async () => {
  const dir = tempDir(after);
  writeFileSync(join(dir, 'text.db'), 'not a database '.repeat(100));
  const result = await cli(`file:${join(dir, 'text.db')}`, 'migrate');
  assert.equal(result.code, 1);
  assert.match(result.stderr, /^plant-store: DATABASE_URL/);
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
});
