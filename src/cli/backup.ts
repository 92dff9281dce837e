import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { databaseKind, sqlitePath } from '../store/database-url.js';
import { backupSqlite } from '../store/sqlite/backup/backup.js';
import { restoreSqlite } from '../store/sqlite/backup/restore.js';
import { SQLITE_MIGRATIONS } from '../store/sqlite/migrations.js';
import { usage, UsageError } from './common.js';

export const BACKUP_USAGE = `  backup FILE [--force]                        copy the SQLite store into FILE while a server writes to it;
                                               the copy is integrity-checked and fsynced before this says done;
                                               --force replaces an existing FILE
  restore FILE                                 replace the SQLite store by the backup FILE, after checking it;
                                               refused while a server has the store open; the replaced store
                                               is kept aside as <store>.replaced-<UTC time>`;

/** The SQLite store's file; PostgreSQL keeps its own tools (README: Backup and restore). */
function storePath(command: string): string {
  const { databaseUrl } = loadConfig();
  if (databaseKind(databaseUrl) === 'postgres') {
    throw new Error(
      `${command} is for the SQLite store; DATABASE_URL names PostgreSQL: use pg_dump and pg_restore, or pg_basebackup (see Backup and restore in the README)`,
    );
  }
  return sqlitePath(databaseUrl);
}

/** The one FILE argument of `command`. */
function oneFile(command: string, positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError(`${command} needs one FILE`);
  return positionals[0]!;
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

export async function backupCommand(args: string[]): Promise<void> {
  const { values, positionals } = usage(() => parseArgs({ args, allowPositionals: true, options: { force: { type: 'boolean' } } }));
  const file = oneFile('backup', positionals);
  const force = values.force === true;
  const store = storePath('backup');
  if (!force && existsSync(resolve(file))) throw new Error(`${resolve(file)} exists already: name a new file, or add --force to replace it`);
  const result = await backupSqlite(store, file, { replace: force });
  process.stderr.write(
    `backed up ${store} to ${result.file}: ${result.plants} plants, ${mib(result.bytes)}, integrity checked, in ${result.seconds.toFixed(1)} s\n`,
  );
}

export function restoreCommand(args: string[]): void {
  const { positionals } = usage(() => parseArgs({ args, allowPositionals: true, options: {} }));
  const file = oneFile('restore', positionals);
  const store = storePath('restore');
  const result = restoreSqlite(file, store);
  const older = result.schemaVersion < SQLITE_MIGRATIONS.length ? ` (the server migrates it to ${SQLITE_MIGRATIONS.length} when it starts)` : '';
  const kept = result.keptAt ? `; the replaced store is kept at ${result.keptAt}` : '';
  process.stderr.write(`restored ${store} from ${resolve(file)}: ${result.plants} plants, schema version ${result.schemaVersion}${older}${kept}\n`);
}
