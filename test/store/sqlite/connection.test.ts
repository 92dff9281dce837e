import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openConnection, prepare } from '../../../src/store/sqlite/connection.js';
import { tempDir } from '../../helpers.js';

test('a statement is prepared once per connection and SQL, and kept (none is left to the garbage collector)', () => {
  const dir = tempDir(after);
  const first = openConnection(join(dir, 'a.db'));
  const second = openConnection(join(dir, 'b.db'));
  after(() => (first.close(), second.close()));
  const select = prepare<[], { one: number }>(first, 'SELECT 1 AS one');
  assert.equal(prepare(first, 'SELECT 1 AS one'), select, 'the same statement again');
  assert.notEqual(prepare(second, 'SELECT 1 AS one'), select, 'another connection has its own');
  assert.deepEqual(select.get(), { one: 1 });
  first.exec('PRAGMA journal_mode = WAL');
  assert.equal(prepare(first, 'PRAGMA journal_mode').pluck().get(), 'wal');
});
