import assert from 'node:assert/strict';
import { chmodSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { BackupSchedule } from '../../../src/backups/schedule.js';
import { backupSqlite } from '../../../src/store/sqlite/backup/backup.js';
import { restoreSqlite } from '../../../src/store/sqlite/backup/restore.js';
import { SqliteStore } from '../../../src/store/sqlite/store.js';
import { tempDir } from '../../helpers.js';
import { until } from '../../toolkit.js';

/**
 * The store's files, its backups and the directories the service makes are private to the service's user
 * (0600 and 0700) whatever the umask: they hold every plant and the webhook secrets in clear. A store
 * file left open to others by an earlier version is warned about at start.
 */

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

function open(path: string): SqliteStore {
  return SqliteStore.open(`file:${path}`, { synchronous: 'FULL', busyTimeoutMs: 5000 });
}

for (const umask of [0o022, 0o000]) {
  describe(`file modes under umask ${umask.toString(8).padStart(3, '0')}`, () => {
    const previous = process.umask(umask);
    after(() => process.umask(previous));

    it('makes the data directories 0700 and the store, its -wal and -shm 0600', async () => {
      const root = tempDir(after);
      const path = join(root, 'data', 'nested', 'plants.db');
      const store = open(path);
      try {
        await store.plants.put({ id: 1, name: 'Fern' });
        assert.deepEqual(store.warnings, []);
        assert.equal(modeOf(join(root, 'data')), '700');
        assert.equal(modeOf(join(root, 'data', 'nested')), '700');
        assert.equal(modeOf(root), '700', 'a directory that was there is left as it is (mkdtemp makes it 0700)');
        for (const name of readdirSync(join(root, 'data', 'nested'))) assert.equal(modeOf(join(root, 'data', 'nested', name)), '600', name);
        assert.deepEqual(readdirSync(join(root, 'data', 'nested')).sort(), ['plants.db', 'plants.db-shm', 'plants.db-wal']);
      } finally {
        await store.close();
      }
    });

    it('writes backups 0600, makes BACKUP_DIR 0700, and restores into a 0600 store whatever the backup was', async () => {
      const root = tempDir(after);
      const path = join(root, 'plants.db');
      const store = open(path);
      await store.plants.put({ id: 1, name: 'Fern' });
      await store.close();
      const backup = (await backupSqlite(path, join(root, 'copy.db'))).file;
      assert.equal(modeOf(backup), '600');
      const replaced = (await backupSqlite(path, backup, { replace: true })).file;
      assert.equal(modeOf(replaced), '600');

      const dir = join(root, 'backups', 'daily');
      const schedule = new BackupSchedule(path, { dir, intervalSeconds: 3600, keep: 2 }, quiet);
      await schedule.start();
      after(() => schedule.stop());
      await until(() => readdirSync(dir).some((name) => name.endsWith('.db')), 'the first scheduled backup', { timeoutMs: 30_000 });
      assert.equal(modeOf(join(root, 'backups')), '700');
      assert.equal(modeOf(dir), '700');
      for (const name of readdirSync(dir)) assert.equal(modeOf(join(dir, name)), '600', name);

      chmodSync(backup, 0o644);
      const target = join(root, 'restored', 'plants.db');
      restoreSqlite(backup, target);
      assert.equal(modeOf(target), '600');
      assert.equal(modeOf(join(root, 'restored')), '700');
    });

    it('warns at open about a store file others can read, made by an earlier version', async () => {
      const root = tempDir(after);
      const path = join(root, 'plants.db');
      await open(path).close();
      chmodSync(path, 0o644);
      const store = open(path);
      try {
        assert.equal(store.warnings.length, 1);
        assert.match(store.warnings[0]!, /the store file .*plants\.db has mode 0644: users other than this service's can read .* chmod 600/);
      } finally {
        await store.close();
      }
    });
  });
}
