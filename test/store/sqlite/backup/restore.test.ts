import assert from 'node:assert/strict';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  truncateSync,
  writeFileSync,
  writeSync,
  closeSync,
  readdirSync,
  symlinkSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { openConnection, prepare } from '../../../../src/store/sqlite/connection.js';
import { restoreSqlite } from '../../../../src/store/sqlite/backup/restore.js';
import { SQLITE_MIGRATIONS } from '../../../../src/store/sqlite/migrations.js';
import { SqliteStore } from '../../../../src/store/sqlite/store.js';
import { tempDir } from '../../../helpers.js';
import { run } from '../../../process.js';
import { dirState, integrity, numbered, plantsIn, storeWith } from './files.js';

/** restoreSqlite: checks the file, refuses a store in use, keeps the replaced store aside whole. */

const STORE_JS = fileURLToPath(new URL('../../../../src/store/sqlite/store.js', import.meta.url));

/** A store with `count` plants named "live …" and a backup of `count` plants named "backup …", in a directory of their own. */
async function setup(count = 5): Promise<{ dir: string; store: string; backup: string }> {
  const dir = tempDir(after);
  const store = await storeWith(
    join(dir, 'store', 'plants.db'),
    numbered(count, (id) => `live ${id}`),
  );
  const backup = await storeWith(
    join(dir, 'backup.db'),
    numbered(count, (id) => `backup ${id}`),
  );
  return { dir, store, backup };
}

const storeDir = (dir: string) => join(dir, 'store');

describe('SQLite restore', () => {
  it('replaces the store by the backup, keeps the replaced store aside whole, and the store opens with the backup', async () => {
    const { dir, store, backup } = await setup();
    const result = restoreSqlite(backup, store);
    assert.equal(result.plants, 5);
    assert.equal(result.schemaVersion, SQLITE_MIGRATIONS.length);
    assert.match(result.keptAt!, /plants\.db\.replaced-\d{8}T\d{6}Z$/);
    assert.equal(plantsIn(result.keptAt!).get('1'), 'live 1');
    assert.equal(integrity(result.keptAt!), 'ok');
    assert.deepEqual(readdirSync(storeDir(dir)).sort(), ['plants.db', result.keptAt!.split('/').at(-1)].sort(), 'no -wal, -shm or partial file');
    const opened = SqliteStore.open(`file:${store}`, { synchronous: 'FULL', busyTimeoutMs: 1000 });
    assert.equal((await opened.plants.get(1n))?.plant.name, 'backup 1');
    assert.equal(await opened.plants.count(), 5);
    await opened.close();
    // A second restore within the same second keeps the first replaced store too.
    const again = restoreSqlite(backup, store);
    assert.notEqual(again.keptAt, result.keptAt);
    assert.ok(existsSync(result.keptAt!));
  });

  it("keeps the committed writes of a crashed server's write-ahead log in the store it sets aside", async () => {
    const { dir, store, backup } = await setup();
    // A process writes (WAL, synchronous=FULL) and is killed before it closes: the -wal holds its commits.
    const script = `const { SqliteStore } = await import(${JSON.stringify(STORE_JS)});
      const store = SqliteStore.open(${JSON.stringify(`file:${store}`)}, { synchronous: 'FULL', busyTimeoutMs: 1000 });
      for (let id = 100; id < 105; id++) await store.plants.put({ id, name: 'only in the wal ' + id });
      process.kill(process.pid, 'SIGKILL');`;
    writeFileSync(join(dir, 'crash.mjs'), script);
    const crashed = await run([join(dir, 'crash.mjs')]);
    assert.equal(crashed.signal, 'SIGKILL', crashed.stderr);
    assert.ok(readFileSync(`${store}-wal`).length > 0, 'the -wal holds the commits');
    const result = restoreSqlite(backup, store);
    const kept = plantsIn(result.keptAt!);
    assert.equal(kept.get('104'), 'only in the wal 104');
    assert.equal(kept.size, 10);
    assert.deepEqual(plantsIn(store).get('104'), undefined, 'the restored store holds none of it');
    assert.ok(!existsSync(`${store}-wal`) && !existsSync(`${store}-shm`), 'no -wal or -shm left beside the restored store');
    assert.equal(readdirSync(storeDir(dir)).length, 2);
  });

  it('refuses while the store is open, and changes nothing', async () => {
    const { dir, store, backup } = await setup();
    const before = dirState(storeDir(dir));
    const open = SqliteStore.open(`file:${store}`, { synchronous: 'FULL', busyTimeoutMs: 1000 });
    assert.throws(() => restoreSqlite(backup, store), {
      message: `the store ${store} is open in another process (a running server, or a plant-store command): stop it, then restore; nothing was replaced`,
    });
    assert.equal((await open.plants.get(1n))?.plant.name, 'live 1');
    await open.close();
    assert.deepEqual(dirState(storeDir(dir)), before);
  });

  it('refuses an empty, truncated, corrupt, foreign or newer file with a one-line reason, and changes nothing', async () => {
    const { dir, store, backup } = await setup(2000);
    const bad = (name: string) => join(dir, name);
    writeFileSync(bad('empty.db'), '');
    writeFileSync(bad('text.db'), 'plants,names\n1,fern\n'.repeat(100));
    writeFileSync(bad('header-only.db'), readFileSync(backup).subarray(0, 100));
    writeFileSync(bad('no-page-size.db'), Buffer.concat([Buffer.from('SQLite format 3\0', 'latin1'), Buffer.alloc(4080)]));
    copyFileSync(backup, bad('half.db'));
    truncateSync(bad('half.db'), Math.floor(readFileSync(backup).length / 2 / 4096) * 4096);
    copyFileSync(backup, bad('ragged.db'));
    truncateSync(bad('ragged.db'), readFileSync(backup).length - 100);
    copyFileSync(backup, bad('corrupt.db'));
    const fd = openSync(bad('corrupt.db'), 'r+');
    writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, 4096 * 3);
    closeSync(fd);
    const foreign = openConnection(bad('foreign.db'));
    foreign.exec('CREATE TABLE notes (text TEXT)');
    foreign.close();
    copyFileSync(backup, bad('newer.db'));
    const newer = openConnection(bad('newer.db'));
    prepare(newer, "INSERT INTO schema_migrations VALUES (99, 'from the future', 'x')").run();
    newer.close();
    mkdirSync(bad('a-directory.db'));

    const before = dirState(storeDir(dir));
    for (const [name, reason] of [
      ['empty.db', /it is empty/],
      ['text.db', /it is not an SQLite database \(it does not start with the SQLite header\)/],
      ['header-only.db', /it is cut short: 100 bytes is not a whole number of its 4096-byte pages/],
      ['no-page-size.db', /it is not an SQLite database \(its header names no valid page size\)/],
      ['half.db', /it is cut short: its header counts \d+ pages of 4096 bytes, the file holds \d+/],
      ['ragged.db', /it is cut short: \d+ bytes is not a whole number of its 4096-byte pages/],
      ['corrupt.db', /it (fails SQLite's integrity check|is corrupt)/],
      ['foreign.db', /it is an SQLite database but not a plant store/],
      ['newer.db', new RegExp(`it has schema version 99, newer than this plant-store knows \\(${SQLITE_MIGRATIONS.length}\\)`)],
      ['a-directory.db', /it is not a file/],
      ['missing.db', /there is no such file/],
    ] as const) {
      assert.throws(
        () => restoreSqlite(bad(name), store),
        (error: Error) => {
          assert.match(error.message, new RegExp(`^cannot restore from ${bad(name)}: `), name);
          assert.match(error.message, reason, name);
          assert.match(error.message, /; nothing was replaced$/, name);
          assert.ok(!error.message.includes('\n'), name);
          return true;
        },
      );
      assert.deepEqual(dirState(storeDir(dir)), before, `${name}: the store's directory is unchanged`);
    }
    assert.throws(() => restoreSqlite(store, store), { message: /it is the store itself; nothing was replaced$/ });
    // The store reached through a symlinked directory is the store all the same.
    const linked = join(tempDir(after), 'linked');
    symlinkSync(storeDir(dir), linked, 'dir');
    assert.throws(() => restoreSqlite(join(linked, basename(store)), store), { message: /it is the store itself; nothing was replaced$/ });
    copyFileSync(backup, bad('live-copy.db'));
    writeFileSync(bad('live-copy.db-wal'), 'frames');
    assert.throws(() => restoreSqlite(bad('live-copy.db'), store), {
      message: /has a write-ahead log beside it .* it is a live database, not a backup/,
    });
    assert.deepEqual(dirState(storeDir(dir)), before);
  });

  it('refuses a backup with a table, index, trigger or view its schema version does not have, or one changed or missing, naming it', async () => {
    const { dir, store, backup } = await setup();
    const before = dirState(storeDir(dir));
    const cases: Array<[string, string, RegExp]> = [
      [
        'un-revoke.db',
        // A trigger that takes back every later token revocation (what a security review slipped into a backup).
        'CREATE TRIGGER keep_tokens AFTER UPDATE OF revoked_at ON tokens BEGIN UPDATE tokens SET revoked_at = NULL WHERE id = new.id; END',
        /it has a trigger keep_tokens that schema version \d+ does not have/,
      ],
      ['extra-table.db', 'CREATE TABLE notes (text TEXT)', /it has a table notes that schema version \d+ does not have/],
      ['extra-index.db', 'CREATE INDEX plants_by_name_only ON plants (name)', /it has an index plants_by_name_only that/],
      ['extra-view.db', 'CREATE VIEW active_tokens AS SELECT id FROM tokens', /it has a view active_tokens that/],
      ['dropped-index.db', 'DROP INDEX plants_tag_id', /it lacks the index plants_tag_id of schema version \d+/],
      [
        'changed-index.db',
        'DROP INDEX plants_tag_id; CREATE INDEX plants_tag_id ON plants (tag)',
        /its index plants_tag_id is not the one schema version \d+ makes/,
      ],
    ];
    for (const [name, sql, reason] of cases) {
      const file = join(dir, name);
      copyFileSync(backup, file);
      const db = openConnection(file);
      db.exec(sql);
      db.close();
      assert.throws(
        () => restoreSqlite(file, store),
        (error: Error) => {
          assert.match(error.message, reason, name);
          assert.match(error.message, /; nothing was replaced$/, name);
          return true;
        },
      );
      assert.deepEqual(dirState(storeDir(dir)), before, `${name}: the store's directory is unchanged`);
    }
    // The same backup untouched is taken.
    assert.equal(restoreSqlite(backup, store).plants, 5);
  });

  it('takes a backup of an older schema, which the store then migrates', async () => {
    const { store } = await setup();
    const dir = tempDir(after);
    const old = join(dir, 'v2.db');
    const db = openConnection(old);
    db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    for (const m of SQLITE_MIGRATIONS.slice(0, 2)) {
      db.exec(m.sql);
      prepare(db, 'INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, 'then');
    }
    prepare(db, "INSERT INTO plants (id, name) VALUES (7, 'from v2')").run();
    db.close();
    assert.equal(restoreSqlite(old, store).schemaVersion, 2);
    const opened = SqliteStore.open(`file:${store}`, { synchronous: 'FULL', busyTimeoutMs: 1000 });
    assert.equal((await opened.plants.get(7n))?.plant.name, 'from v2');
    await opened.close();
  });

  it('sets aside a store file SQLite cannot read at all (no process can be using it) and restores over it', async () => {
    const { store, backup } = await setup();
    writeFileSync(store, 'not a database, a damaged file '.repeat(500));
    const result = restoreSqlite(backup, store);
    assert.equal(readFileSync(result.keptAt!, 'utf8').slice(0, 14), 'not a database');
    assert.equal(plantsIn(store).get('1'), 'backup 1');
  });

  it('restores onto a store that does not exist yet, making its directory', async () => {
    const { backup } = await setup();
    const store = join(tempDir(after), 'new', 'plants.db');
    const result = restoreSqlite(backup, store);
    assert.equal(result.keptAt, undefined);
    assert.equal(plantsIn(store).get('5'), 'backup 5');
    assert.deepEqual(readdirSync(join(store, '..')), ['plants.db']);
  });

  it('removes the staged copy a restore killed before it was done left beside the store, and no file of a process that runs', async () => {
    const { dir, store, backup } = await setup();
    // What a restore killed outright (SIGKILL, a crash) leaves: its staged copy, named with its pid, and its journal.
    const killed = await run(['-e', `process.stdout.write(String(process.pid))`]);
    const left = [`.plants.db.partial-${killed.stdout}-0a1b2c3d`, `.plants.db.partial-${killed.stdout}-0a1b2c3d-journal`];
    for (const name of left) copyFileSync(backup, join(storeDir(dir), name));
    // A restore under way in a process that runs (this one): its file is its own.
    const running = `.plants.db.partial-${process.pid}-deadbeef`;
    writeFileSync(join(storeDir(dir), running), '');
    const result = restoreSqlite(backup, store);
    assert.deepEqual(readdirSync(storeDir(dir)).sort(), ['plants.db', basename(result.keptAt!), running].sort());
  });
});
