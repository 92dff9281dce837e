import assert from 'node:assert/strict';
import { readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openConnection } from '../../../../src/store/sqlite/connection.js';
import { backupSqlite } from '../../../../src/store/sqlite/backup/backup.js';
import { SQLITE_MIGRATIONS } from '../../../../src/store/sqlite/migrations.js';
import { SqliteStore } from '../../../../src/store/sqlite/store.js';
import { tempDir } from '../../../helpers.js';

import { dirState, integrity, numbered, plantsIn, storeWith } from './files.js';
import { until } from '../../../toolkit.js';

/** backupSqlite: the copy `plant-store backup` and the server's schedule both take. */

describe('SQLite backup', () => {
  it('a backup taken while writes go on holds every plant acknowledged before it began, and passes integrity_check', async () => {
    const dir = tempDir(after);
    const path = await storeWith(join(dir, 'live.db'), numbered(20_000));
    const store = SqliteStore.open(`file:${path}`, { synchronous: 'FULL', busyTimeoutMs: 5000 });
    after(() => store.close());
    const acknowledged = new Map<string, string>();
    let next = 1_000_000;
    let stop = false;
    const writer = async () => {
      while (!stop) {
        const id = next++;
        await store.plants.put({ id, name: `written ${id}` });
        acknowledged.set(String(id), `written ${id}`);
      }
    };
    const writers = Array.from({ length: 8 }, writer);
    await until(() => acknowledged.size >= 200, 'writes to be acknowledged', { timeoutMs: 30_000 });
    const before = new Map(acknowledged);
    const result = await backupSqlite(path, join(dir, 'copy.db'));
    const duringBackup = acknowledged.size - before.size;
    stop = true;
    await Promise.all(writers);

    assert.ok(before.size > 0, 'writes were acknowledged before the backup');
    assert.ok(duringBackup > 0, 'writes went on while the backup was taken');
    const copied = plantsIn(result.file);
    for (const [id, name] of before) assert.equal(copied.get(id), name, `plant ${id}, acknowledged before the backup began`);
    for (let id = 1; id <= 20_000; id++) assert.equal(copied.get(String(id)), `plant ${id}`);
    // Nothing in the copy that was not written: every plant beyond the seed was acknowledged by now.
    for (const [id, name] of copied) if (Number(id) > 20_000) assert.equal(acknowledged.get(id), name, `plant ${id} in the copy`);
    assert.equal(integrity(result.file), 'ok');
    assert.equal(result.plants, copied.size);
    assert.equal(result.schemaVersion, SQLITE_MIGRATIONS.length);
    assert.ok(result.bytes > 0 && result.seconds > 0);
    assert.deepEqual(
      readdirSync(dir).filter((name) => name.includes('partial')),
      [],
      'no partial file left',
    );
  });

  it('refuses an existing file unless asked to replace it, and then replaces it whole', async () => {
    const dir = tempDir(after);
    const path = await storeWith(join(dir, 'live.db'), numbered(3));
    const target = join(dir, 'copy.db');
    writeFileSync(target, 'an older file');
    const before = dirState(dir);
    await assert.rejects(backupSqlite(path, target), { message: `${target} exists already` });
    assert.deepEqual(dirState(dir), before);
    const result = await backupSqlite(path, target, { replace: true });
    assert.equal(plantsIn(target).size, 3);
    assert.equal(result.plants, 3);
  });

  it('refuses the store itself, a missing directory and a missing store, and writes nothing', async () => {
    const dir = tempDir(after);
    const path = await storeWith(join(dir, 'live.db'), numbered(1));
    const before = dirState(dir);
    for (const [target, message] of [
      [path, /is the store itself/],
      [`${path}-wal`, /is the store itself/],
      [join(dir, 'nowhere', 'copy.db'), /the directory .*nowhere does not exist/],
    ] as const) {
      await assert.rejects(backupSqlite(path, target, { replace: true }), { message }, target);
    }
    await assert.rejects(backupSqlite(join(dir, 'absent.db'), join(dir, 'copy.db')), { message: /there is no SQLite store at .*absent\.db/ });
    assert.deepEqual(dirState(dir), before);
  });

  it('refuses the store reached another way (a symlinked directory, a link to the file, `..`), even with replace', async () => {
    const dir = tempDir(after);
    const path = await storeWith(join(dir, 'live.db'), numbered(2));
    const elsewhere = tempDir(after);
    symlinkSync(dir, join(elsewhere, 'data'), 'dir');
    symlinkSync(path, join(elsewhere, 'store.db'));
    const before = dirState(dir);
    for (const target of [
      join(elsewhere, 'data', 'live.db'),
      join(elsewhere, 'data', 'live.db-wal'),
      join(elsewhere, 'store.db'),
      `${dir}/../${basename(dir)}/live.db`,
    ]) {
      await assert.rejects(backupSqlite(path, target, { replace: true }), { message: /is the store itself/ }, target);
    }
    // The store named through the link, backed up into its own real path: the same refusal.
    await assert.rejects(backupSqlite(join(elsewhere, 'data', 'live.db'), path, { replace: true }), { message: /is the store itself/ });
    assert.deepEqual(dirState(dir), before);
    assert.equal(plantsIn(path).size, 2);
  });

  it('refuses to call a database that is not a plant store a backup, leaving no file', async () => {
    const dir = tempDir(after);
    const other = join(dir, 'other.db');
    const db = openConnection(other);
    db.exec('CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES (1)');
    db.close();
    await assert.rejects(backupSqlite(other, join(dir, 'copy.db')), { message: /not a plant store \(it has no schema_migrations table\)/ });
    assert.deepEqual(readdirSync(dir), ['other.db']);
  });

  it('stopped, it ends the copying process at once and leaves no file', async () => {
    const dir = tempDir(after);
    const path = await storeWith(join(dir, 'live.db'), numbered(50_000));
    const controller = new AbortController();
    const backup = backupSqlite(path, join(dir, 'copy.db'), { signal: controller.signal });
    controller.abort();
    await assert.rejects(backup, { message: 'the backup was stopped' });
    assert.deepEqual(readdirSync(dir), ['live.db']);
  });
});
