import assert from 'node:assert/strict';
import { readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { backupName, listBackups, prune } from '../../src/backups/names.js';
import { tempDir } from '../helpers.js';

/** The scheduled backups' names: sortable UTC times, and pruning that deletes only what the schedule made. */

describe('scheduled backup names', () => {
  it("are the store's name and the UTC time, sortable", () => {
    assert.equal(backupName('/data/plant-store.db', new Date('2025-01-02T03:04:05.678Z')), 'plant-store-20250102T030405Z.db');
    assert.equal(backupName('/data/plants.sqlite3', new Date('2025-12-31T23:59:59Z')), 'plants-20251231T235959Z.db');
    assert.equal(backupName('/data/plants', new Date('2025-12-31T23:59:59Z')), 'plants-20251231T235959Z.db');
  });

  it("lists this store's backups oldest first, with their times, and nothing else", async () => {
    const dir = tempDir(after);
    for (const name of [
      'plants-20250102T030405Z.db',
      'plants-20241231T235959Z.db',
      'other-20250101T000000Z.db', // another store's
      'plants-20250102T030405Z.db.bak',
      'plants-latest.db',
      'notes.txt',
    ]) {
      writeFileSync(join(dir, name), '');
    }
    assert.deepEqual(await listBackups(dir, '/data/plants.db'), [
      { name: 'plants-20241231T235959Z.db', takenAt: Date.parse('2024-12-31T23:59:59Z') },
      { name: 'plants-20250102T030405Z.db', takenAt: Date.parse('2025-01-02T03:04:05Z') },
    ]);
  });

  it('prunes all but the newest, and partial files only once they are stale, never anything else', async () => {
    const dir = tempDir(after);
    const backups = ['plants-20250101T000000Z.db', 'plants-20250102T000000Z.db', 'plants-20250103T000000Z.db', 'plants-20250104T000000Z.db'];
    const stale = ['.plants-20250101T000000Z.db.partial-123-0a1b2c3d', '.plants-20250101T000000Z.db.partial-123-0a1b2c3d-journal'];
    const fresh = '.plants-20250105T000000Z.db.partial-456-deadbeef';
    const others = ['other-20250101T000000Z.db', 'plants.db', 'plants-20250101T000000Z.db.keep', '.hidden'];
    for (const name of [...backups, ...stale, fresh, ...others]) writeFileSync(join(dir, name), '');
    for (const name of stale) utimesSync(join(dir, name), new Date(Date.now() - 2 * 3_600_000), new Date(Date.now() - 2 * 3_600_000));

    const pruned = await prune(dir, '/data/plants.db', 2);
    assert.deepEqual(pruned.sort(), [...backups.slice(0, 2), ...stale].sort());
    assert.deepEqual(readdirSync(dir).sort(), [...backups.slice(2), fresh, ...others].sort());
    assert.deepEqual(await prune(dir, '/data/plants.db', 2), [], 'nothing more to prune');
    assert.deepEqual((await prune(dir, '/data/plants.db', 5)).length, 0);
  });
});
