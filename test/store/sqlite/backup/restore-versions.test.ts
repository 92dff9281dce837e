import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { restoreSqlite } from '../../../../src/store/sqlite/backup/restore.js';
import { SqliteStore } from '../../../../src/store/sqlite/store.js';
import { tempDir } from '../../../helpers.js';
import { numbered, storeWith } from './files.js';

/**
 * Versions are never reused, a restore included: the restored store counts on from the last version the
 * replaced store gave out, not from the backup's counter. Otherwise the writes after a restore were given
 * the versions the writes lost with it had: an ETag read before the restore matched another state of the
 * plant, and If-Match let a stale write through.
 */
describe('a restore and plant versions', () => {
  async function versionOf(path: string, id: number): Promise<number> {
    const store = SqliteStore.open(`file:${path}`, { synchronous: 'FULL', busyTimeoutMs: 1000 });
    try {
      return (await store.plants.get(id))!.version;
    } finally {
      await store.close();
    }
  }

  it('the restored store gives out versions past every one the replaced store gave', async () => {
    const dir = tempDir(after);
    const backup = await storeWith(
      join(dir, 'backup.db'),
      numbered(3, (id) => `backup ${id}`),
    );
    const path = await storeWith(
      join(dir, 'store', 'plants.db'),
      numbered(3, (id) => `live ${id}`),
    );
    // The store goes on after the backup: plant 1 is written many times (the lost writes' versions).
    const live = SqliteStore.open(`file:${path}`, { synchronous: 'FULL', busyTimeoutMs: 1000 });
    for (let n = 0; n < 40; n++) await live.plants.put({ id: 1, name: `live 1, write ${n}` });
    const lost = (await live.plants.get(1))!.version;
    await live.close();

    restoreSqlite(backup, path);
    const restored = SqliteStore.open(`file:${path}`, { synchronous: 'FULL', busyTimeoutMs: 1000 });
    try {
      assert.equal((await restored.plants.get(1))!.plant.name, 'backup 1');
      for (let n = 0; n < 40; n++) await restored.plants.put({ id: 2, name: `after the restore ${n}` });
      await restored.plants.put({ id: 1, name: 'written after the restore' });
      const after = (await restored.plants.get(1))!.version;
      assert.ok(after > lost, `version ${after} after the restore, ${lost} given out before it`);
      // The ETag held from before the restore names no state of the plant now.
      assert.deepEqual(await restored.plants.put({ id: 1, name: 'stale' }, { ifMatch: [lost] }), { outcome: 'precondition-failed' });
    } finally {
      await restored.close();
    }
    assert.ok((await versionOf(path, 2)) > lost);
  });

  it('onto no store, the backup counts on from its own counter', async () => {
    const dir = tempDir(after);
    const backup = await storeWith(join(dir, 'backup.db'), numbered(3));
    const before = await versionOf(backup, 3);
    const path = join(dir, 'new', 'plants.db');
    restoreSqlite(backup, path);
    assert.equal(await versionOf(path, 3), before);
  });
});
