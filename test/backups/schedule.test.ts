import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { backupName } from '../../src/backups/names.js';
import { BackupSchedule, type ScheduleLog } from '../../src/backups/schedule.js';
import { backupMetrics } from '../../src/metrics/backups.js';
import { tempDir } from '../helpers.js';

import { integrity, numbered, plantsIn, storeWith } from '../store/sqlite/backup/files.js';
import { until } from '../toolkit.js';

/** The server's schedule: when backups are taken, how they are named, pruned, counted and logged. */

interface Line {
  level: 'info' | 'warn' | 'error';
  details: Record<string, unknown>;
  message: string;
}

/** A schedule over `storePath` into `dir`, its log lines and its metrics; stopped when the test file ends. */
function schedule(storePath: string, dir: string, intervalSeconds: number, keep: number) {
  const lines: Line[] = [];
  const log = (level: Line['level']) => (details: object, message: string) => lines.push({ level, details: details as Line['details'], message });
  const logger: ScheduleLog = { info: log('info'), warn: log('warn'), error: log('error') };
  const registry = new Registry();
  const backups = new BackupSchedule(storePath, { dir, intervalSeconds, keep }, logger, backupMetrics(registry));
  after(() => backups.stop());
  const metric = async (name: string) => {
    const text = await registry.metrics();
    return Number(new RegExp(`^${name.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
  };
  const taken = () => lines.filter((line) => line.message.startsWith('backup taken'));
  return { backups, lines, metric, taken };
}

describe('scheduled backups', () => {
  it('takes one at once when there is none, then one every interval, keeping the newest; each named, checked, logged and counted', async () => {
    const dir = tempDir(after);
    const store = await storeWith(join(dir, 'plants.db'), numbered(10));
    const into = join(dir, 'backups');
    const { backups, lines, metric, taken } = schedule(store, into, 1, 2);
    await backups.start();
    await until(() => taken().length >= 3, 'three backups', { timeoutMs: 60_000 });
    await backups.stop();

    const names = readdirSync(into).sort();
    assert.equal(names.length, 2, `the newest two kept: ${names.join(' ')}`);
    for (const name of names) {
      assert.match(name, /^plants-\d{8}T\d{6}Z\.db$/);
      assert.equal(integrity(join(into, name)), 'ok');
      assert.equal(plantsIn(join(into, name)).size, 10);
    }
    const [third] = taken().slice(2);
    assert.deepEqual(Object.keys(third!.details).sort(), ['bytes', 'file', 'plants', 'pruned', 'seconds']);
    assert.equal(third!.details.file, join(into, names[1]!));
    assert.equal(third!.details.plants, 10);
    assert.equal((third!.details.pruned as string[]).length, 1, 'the oldest of three pruned');
    assert.equal(lines.filter((line) => line.level !== 'info').length, 0, JSON.stringify(lines));
    const ok = await metric('plant_store_backups_total{outcome="ok"}');
    assert.ok(ok >= 3, String(ok));
    assert.equal(await metric('plant_store_backups_total{outcome="failed"}'), 0);
    assert.ok((await metric('plant_store_backup_last_success_timestamp_seconds')) * 1000 > Date.now() - 60_000);
    assert.ok((await metric('plant_store_backup_size_bytes')) > 0);
    assert.ok((await metric('plant_store_backup_duration_seconds')) > 0);
  });

  it('counts the interval from the newest backup in the directory, so a restart neither repeats nor delays one', async () => {
    const dir = tempDir(after);
    const store = await storeWith(join(dir, 'plants.db'), numbered(1));
    const tenMinutesAgo = new Date(Math.floor(Date.now() / 1000) * 1000 - 600_000);
    writeFileSync(join(dir, backupName(store, tenMinutesAgo)), '');
    const { backups, lines, metric } = schedule(store, dir, 3600, 5);
    await backups.start();
    assert.equal(lines[0]!.message, `backups of the store every 1h into ${dir}, the newest 5 kept`);
    assert.equal(lines[0]!.details.next, new Date(tenMinutesAgo.getTime() + 3_600_000).toISOString());
    assert.equal(await metric('plant_store_backup_last_success_timestamp_seconds'), tenMinutesAgo.getTime() / 1000);

    // A backup named in the future (the clock was set back) waits one interval at most.
    const later = tempDir(after);
    writeFileSync(join(later, backupName(store, new Date(Date.now() + 30 * 86_400_000))), '');
    const second = schedule(store, later, 3600, 5);
    await second.backups.start();
    assert.ok(Date.parse(second.lines[0]!.details.next as string) <= Date.now() + 3_600_000);
  });

  it('never prunes the backup it has just taken, even with backups named later than it (the clock was set back)', async () => {
    const dir = tempDir(after);
    const store = await storeWith(join(dir, 'plants.db'), numbered(3));
    const into = join(dir, 'backups');
    mkdirSync(into);
    // Taken while the clock was a month ahead: whole backups, named later than any taken now.
    const ahead = [1, 2].map((days) => backupName(store, new Date(Date.now() + days * 30 * 86_400_000)));
    for (const name of ahead) copyFileSync(store, join(into, name));
    const { backups, taken } = schedule(store, into, 1, 1);
    await backups.start();
    await until(() => taken().length >= 1, 'a backup', { timeoutMs: 60_000 });
    await backups.stop();
    const [first] = taken();
    const file = first!.details.file as string;
    assert.deepEqual(readdirSync(into), [basename(file)], 'the backup just taken is the one kept');
    assert.deepEqual((first!.details.pruned as string[]).sort(), ahead.sort());
    assert.equal(plantsIn(file).size, 3);
  });

  it('logs and counts a failed backup, never throws, and tries again at the next interval', async () => {
    const dir = tempDir(after);
    const store = join(dir, 'plants.db');
    const { backups, lines, metric, taken } = schedule(store, join(dir, 'backups'), 1, 3);
    await backups.start();
    await until(() => lines.some((line) => line.level === 'error'), 'a failure', { timeoutMs: 60_000 });
    const failure = lines.find((line) => line.level === 'error')!;
    assert.equal(failure.message, `backup failed: there is no SQLite store at ${store} to back up; the next attempt is in 1s`);
    assert.ok((await metric('plant_store_backups_total{outcome="failed"}')) >= 1);
    await storeWith(store, numbered(2));
    await until(() => taken().length >= 1, 'a backup once the store exists', { timeoutMs: 60_000 });
    assert.equal(await metric('plant_store_backups_total{outcome="ok"}'), 1);
  });

  it('stopped, it ends a backup in progress and leaves no partial file, and logs no failure', async () => {
    const dir = tempDir(after);
    const store = await storeWith(join(dir, 'plants.db'), numbered(100_000));
    const into = join(dir, 'backups');
    const { backups, lines, metric } = schedule(store, into, 3600, 3);
    await backups.start();
    await until(() => readdirSync(into).some((name) => name.includes('.partial-')), 'a backup in progress', { timeoutMs: 60_000, everyMs: 5 });
    await backups.stop();
    assert.deepEqual(readdirSync(into), []);
    assert.equal(lines.filter((line) => line.level !== 'info').length, 0, JSON.stringify(lines));
    assert.equal(await metric('plant_store_backups_total{outcome="failed"}'), 0);
  });

  it('held (its worker leaving), it finishes the backup in progress and begins no other', async () => {
    const dir = tempDir(after);
    const store = await storeWith(join(dir, 'plants.db'), numbered(100_000));
    const into = join(dir, 'backups');
    const { backups, metric, taken } = schedule(store, into, 1, 5);
    await backups.start();
    await until(() => readdirSync(into).some((name) => name.includes('.partial-')), 'a backup in progress', { timeoutMs: 60_000, everyMs: 5 });
    backups.hold();
    await until(() => taken().length === 1, 'the backup in progress to finish', { timeoutMs: 60_000 });
    // Two intervals and more: a schedule not held would have begun another.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.equal(taken().length, 1);
    assert.equal(readdirSync(into).length, 1);
    assert.equal(await metric('plant_store_backups_total{outcome="ok"}'), 1);
  });

  it('refuses a BACKUP_DIR it cannot write into, naming it', async () => {
    const dir = tempDir(after);
    writeFileSync(join(dir, 'a-file'), '');
    const { backups } = schedule(join(dir, 'plants.db'), join(dir, 'a-file', 'backups'), 60, 1);
    await assert.rejects(backups.start(), { message: `BACKUP_DIR: cannot write backups into ${join(dir, 'a-file', 'backups')} (ENOTDIR)` });
  });
});
