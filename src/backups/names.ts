import { readdir, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileStamp } from '../store/sqlite/backup/files.js';

/**
 * The scheduled backups' names: `<store's name>-<UTC time>.db` (plant-store-20250102T030405Z.db for
 * plant-store.db), so that they sort by time and several stores can share a directory. Only names of this
 * form, for this store, are ever listed or deleted: other files in the directory are left alone.
 */

export interface ScheduledBackup {
  name: string;
  /** When it was started, from its name (epoch ms). */
  takenAt: number;
}

/** A partial file of a backup that has not been written to for this long was left by a process that died. */
const STALE_PARTIAL_MS = 3_600_000;

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const storeName = (storePath: string) => basename(storePath).replace(/\.(db|sqlite3?)$/i, '');

function patterns(storePath: string): { backup: RegExp; partial: RegExp } {
  const name = `${escape(storeName(storePath))}-(\\d{8}T\\d{6}Z)\\.db`;
  // backup/files.ts partialName(): .<name>.partial-<pid>-<hex>, and SQLite's journal of it.
  return { backup: new RegExp(`^${name}$`), partial: new RegExp(`^\\.${name}\\.partial-\\d+-[0-9a-f]+(-journal)?$`) };
}

export function backupName(storePath: string, date: Date): string {
  return `${storeName(storePath)}-${fileStamp(date)}.db`;
}

/** The store's scheduled backups in `dir`, oldest first. */
export async function listBackups(dir: string, storePath: string): Promise<ScheduledBackup[]> {
  const { backup } = patterns(storePath);
  const found: ScheduledBackup[] = [];
  for (const name of await readdir(dir)) {
    const stamp = backup.exec(name)?.[1];
    if (stamp === undefined) continue;
    const iso = `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13)}`;
    found.push({ name, takenAt: Date.parse(iso) });
  }
  return found.sort((a, b) => a.takenAt - b.takenAt);
}

/**
 * Deletes all but the newest `keep` backups, and partial files left by a process that died; returns the names
 * deleted. `taken`, the backup just taken, is one of those kept whatever its name says: names later than
 * it (taken while the clock was ahead, before it was set back) would otherwise push it out, and with
 * BACKUP_KEEP=1 every new backup would be deleted as soon as it was taken, for as long as the clock is behind.
 */
export async function prune(dir: string, storePath: string, keep: number, taken?: string): Promise<string[]> {
  const others = (await listBackups(dir, storePath)).filter((backup) => backup.name !== taken);
  const room = taken === undefined ? keep : keep - 1;
  const doomed = others.slice(0, Math.max(0, others.length - room)).map((b) => b.name);
  const { partial } = patterns(storePath);
  for (const name of await readdir(dir)) {
    if (!partial.test(name)) continue;
    const stats = await stat(join(dir, name)).catch(() => undefined);
    if (stats && Date.now() - stats.mtimeMs > STALE_PARTIAL_MS) doomed.push(name);
  }
  for (const name of doomed) await rm(join(dir, name), { force: true });
  return doomed;
}
