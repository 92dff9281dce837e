import assert from 'node:assert/strict';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openConnection, prepare } from '../../../../src/store/sqlite/connection.js';
import { backupSqlite } from '../../../../src/store/sqlite/backup/backup.js';
import { restoreSqlite } from '../../../../src/store/sqlite/backup/restore.js';
import { foreignReservedObject } from '../../../../src/store/sqlite/reserved-names.js';
import { SqliteStore } from '../../../../src/store/sqlite/store.js';
import { tempDir } from '../../../helpers.js';
import { dirState, numbered, storeWith, withHiddenTrigger } from './files.js';

/**
 * Objects named under SQLite's prefix (sqlite_…): restore, the backup check and every open of the store
 * take exactly those SQLite makes, and refuse any other, naming it.
 */

const HIDDEN = /it has a trigger sqlite_keep, a name SQLite keeps for its own objects \(sqlite_…\), but SQLite makes no such trigger/;

/** A store of 3 plants and one active token, in a directory of its own. */
async function setup(): Promise<{ dir: string; store: string; backup: string }> {
  const dir = tempDir(after);
  const store = await storeWith(join(dir, 'store', 'plants.db'), numbered(3));
  const backup = await storeWith(join(dir, 'backup.db'), numbered(3));
  const db = openConnection(backup, { fileMustExist: true });
  prepare(db, "INSERT INTO tokens (id, name, hash, scopes, created_at) VALUES ('t1', 'ci', x'01', 'plants:read', '2025-01-01T00:00:00Z')").run();
  db.close();
  return { dir, store, backup };
}

/** Runs `sql` on a copy of `source` at `target` with the schema writable, as a file crafted by hand would be. */
function crafted(source: string, target: string, sql: string): string {
  copyFileSync(source, target);
  const db = openConnection(target, { fileMustExist: true });
  // better-sqlite3 opens connections in SQLite's defensive mode, which forbids writing sqlite_master.
  db.unsafeMode(true);
  db.exec(`PRAGMA writable_schema = ON; ${sql}; PRAGMA writable_schema = OFF`);
  db.close();
  return target;
}

/** The revocation time of token t1 after revoking it in the file at `path` (null: the revocation was taken back). */
function revokedAtAfterRevoking(path: string): unknown {
  const db = openConnection(path, { fileMustExist: true });
  try {
    prepare(db, "UPDATE tokens SET revoked_at = '2025-06-01T00:00:00Z' WHERE id = 't1'").run();
    return prepare(db, "SELECT revoked_at FROM tokens WHERE id = 't1'").pluck().get();
  } finally {
    db.close();
  }
}

describe("objects under SQLite's prefix", () => {
  it("refuses to restore the review's backup: a trigger renamed sqlite_keep in the file's bytes that takes back every revocation", async () => {
    const { dir, store, backup } = await setup();
    const tampered = withHiddenTrigger(backup, join(dir, 'tampered.db'));
    // The trigger is live in the file: a revocation made there is taken back at once (and only there).
    const probe = join(dir, 'probe.db');
    copyFileSync(tampered, probe);
    assert.equal(revokedAtAfterRevoking(probe), null);
    const plain = join(dir, 'plain.db');
    copyFileSync(backup, plain);
    assert.equal(revokedAtAfterRevoking(plain), '2025-06-01T00:00:00Z');

    const before = dirState(join(dir, 'store'));
    assert.throws(
      () => restoreSqlite(tampered, store),
      (error: Error) => {
        assert.match(error.message, new RegExp(`^cannot restore from ${tampered}: ${HIDDEN.source}; nothing was replaced$`));
        return true;
      },
    );
    assert.deepEqual(dirState(join(dir, 'store')), before, 'nothing replaced');
    assert.equal(restoreSqlite(backup, store).plants, 3, 'the same backup without the trigger is taken');
  });

  it('refuses any other object under the prefix, in any case, naming it; an automatic index only for its own table', async () => {
    const { dir, store, backup } = await setup();
    const before = dirState(join(dir, 'store'));
    const cases: Array<[string, string, RegExp]> = [
      [
        'view.db',
        "CREATE VIEW v AS SELECT id FROM tokens; UPDATE sqlite_master SET name = 'sqlite_v', tbl_name = 'sqlite_v', sql = 'CREATE VIEW sqlite_v AS SELECT id FROM tokens' WHERE name = 'v'",
        /it has a view sqlite_v, a name SQLite keeps for its own objects \(sqlite_…\), but SQLite makes no such view/,
      ],
      [
        'upper-case.db',
        "CREATE TABLE n (t TEXT); UPDATE sqlite_master SET name = 'SQLITE_NOTES', tbl_name = 'SQLITE_NOTES', sql = 'CREATE TABLE SQLITE_NOTES (t TEXT)' WHERE name = 'n'",
        /it has a table SQLITE_NOTES, a name SQLite keeps for its own objects \(sqlite_…\), but SQLite makes no such table/,
      ],
      [
        'autoindex-with-sql.db',
        "CREATE INDEX x ON tokens (revoked_at); UPDATE sqlite_master SET name = 'sqlite_autoindex_tokens_3', sql = 'CREATE INDEX sqlite_autoindex_tokens_3 ON tokens (revoked_at)' WHERE name = 'x'",
        /it has an index sqlite_autoindex_tokens_3, .* but SQLite makes a sqlite_autoindex_tokens_3 only as an index of tokens without SQL/,
      ],
      [
        'stat-redefined.db',
        "CREATE TABLE zz (tbl, idx, stat, extra); UPDATE sqlite_master SET name = 'sqlite_stat1', tbl_name = 'sqlite_stat1', sql = 'CREATE TABLE sqlite_stat1(tbl,idx,stat,extra)' WHERE name = 'zz'",
        /it has a table sqlite_stat1, .* but SQLite's own sqlite_stat1 is a table made as CREATE TABLE sqlite_stat1\(tbl,idx,stat\)/,
      ],
      [
        // SQLite itself refuses to load a schema with an automatic index no table makes (it names it).
        'orphan-autoindex.db',
        "UPDATE sqlite_master SET name = 'sqlite_autoindex_ghosts_1', tbl_name = 'ghosts' WHERE name = 'sqlite_autoindex_tokens_2'",
        /sqlite_autoindex_ghosts_1/,
      ],
    ];
    for (const [name, sql, reason] of cases) {
      const file = crafted(backup, join(dir, name), sql);
      assert.throws(
        () => restoreSqlite(file, store),
        (error: Error) => {
          assert.match(error.message, reason, name);
          assert.match(error.message, /; nothing was replaced$/, name);
          return true;
        },
      );
      assert.deepEqual(dirState(join(dir, 'store')), before, `${name}: nothing replaced`);
    }
  });

  it('takes what SQLite itself makes: automatic indexes, statistics (ANALYZE), AUTOINCREMENT counters', async () => {
    const { dir, store, backup } = await setup();
    const analyzed = join(dir, 'analyzed.db');
    copyFileSync(backup, analyzed);
    const db = openConnection(analyzed, { fileMustExist: true });
    db.exec('ANALYZE');
    const names = prepare(db, "SELECT name FROM sqlite_master WHERE name LIKE 'sqlite%' ORDER BY name").pluck().all();
    db.close();
    assert.ok(names.includes('sqlite_stat1') && names.includes('sqlite_autoindex_tokens_1'), names.join(', '));
    assert.equal(restoreSqlite(analyzed, store).plants, 3);

    // No migration uses AUTOINCREMENT; its table is SQLite's all the same, and an unknown automatic index is not.
    const memory = openConnection(':memory:');
    memory.exec(
      'CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, u TEXT UNIQUE, v TEXT, UNIQUE (v, u)); INSERT INTO t (u, v) VALUES (1, 2); ANALYZE',
    );
    assert.equal(foreignReservedObject(memory), undefined);
    memory.close();
  });

  it('the backup check refuses a store with such an object, naming it, and leaves no file', async () => {
    const { dir, backup } = await setup();
    const live = withHiddenTrigger(backup, join(dir, 'live.db'));
    const target = join(dir, 'copy.db');
    await assert.rejects(backupSqlite(live, target), (error: Error) => {
      assert.match(error.message, new RegExp(`^the copy of ${live} ${HIDDEN.source.replace('it has', 'has')}; no backup was written$`));
      return true;
    });
    assert.ok(!existsSync(target), 'no backup written');
  });

  it('a store with such an object is not opened (a file copied into place by hand), naming it; one ANALYZE made is', async () => {
    const { dir, backup } = await setup();
    const placed = withHiddenTrigger(backup, join(dir, 'placed.db'));
    assert.throws(
      () => SqliteStore.open(`file:${placed}`, { synchronous: 'FULL', busyTimeoutMs: 1000 }),
      (error: Error) => {
        assert.match(
          error.message,
          /^the file has a trigger sqlite_keep, a name SQLite keeps for its own objects \(sqlite_…\), but SQLite makes no such trigger: it was altered outside plant-store/,
        );
        return true;
      },
    );
    const analyzed = join(dir, 'analyzed.db');
    copyFileSync(backup, analyzed);
    const db = openConnection(analyzed, { fileMustExist: true });
    db.exec('ANALYZE');
    db.close();
    const opened = SqliteStore.open(`file:${analyzed}`, { synchronous: 'FULL', busyTimeoutMs: 1000 });
    assert.equal(await opened.plants.count(), 3);
    await opened.close();
  });
});
