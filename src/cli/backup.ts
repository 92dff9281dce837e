import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig } from '../config/config.js';
import { databaseKind, sqlitePath } from '../store/database-url.js';
import { backupSqlite } from '../store/sqlite/backup/backup.js';
import { restoreSqlite } from '../store/sqlite/backup/restore.js';
import { SQLITE_MIGRATIONS } from '../store/sqlite/migrations.js';
import type { Command } from './command.js';
import { say } from './output.js';

/** The SQLite store's file; PostgreSQL keeps its own tools (docs/backups.md). */
function storePath(command: string): string {
  const { databaseUrl } = loadConfig();
  if (databaseKind(databaseUrl) === 'postgres') {
    throw new Error(
      `${command} is for the SQLite store; DATABASE_URL names PostgreSQL: use pg_dump and pg_restore, or pg_basebackup (see docs/backups.md)`,
    );
  }
  return sqlitePath(databaseUrl);
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** The signals that stop a backup: Ctrl-C (to the copying process too), a `kill`, a closed terminal. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Runs a backup that a signal ends as a refusal: the copying process killed and the partial file removed
 * (backup.ts), where dying of the signal would leave a hidden file as big as the store that nothing deletes.
 */
async function stoppable<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const stop = new AbortController();
  const end = (signal: NodeJS.Signals) => stop.abort(signal);
  for (const name of STOP_SIGNALS) process.once(name, end);
  try {
    return await work(stop.signal);
  } catch (error) {
    if (stop.signal.aborted) throw new Error(`the backup was stopped (${String(stop.signal.reason)}); its partial file is removed`, { cause: error });
    throw error;
  } finally {
    for (const name of STOP_SIGNALS) process.off(name, end);
  }
}

/** `plant-store backup FILE`: a checked, fsynced copy of the live SQLite store. */
export const backupCommand: Command = {
  name: 'backup',
  summary: 'copy the SQLite store into a file while a server writes to it',
  usesStore: true,
  actions: {
    summary: 'copy the SQLite store into FILE while a server writes to it',
    details:
      'The copy is made with VACUUM INTO in a child process (writes go on meanwhile), then integrity-checked and fsynced before this says done. ' +
      'For PostgreSQL use pg_dump or pg_basebackup (docs/backups.md).',
    args: [{ name: 'FILE', required: true, help: 'the backup to write (a new file, unless --force)' }],
    options: { force: { type: 'boolean', help: 'replace FILE if it exists' } },
    async run(given) {
      const file = given.args[0]!;
      const force = given.flag('force');
      const store = storePath('backup');
      const target = resolve(file);
      // A folder cannot be replaced by a file, --force or not: said before the copy, not after it.
      if (existsSync(target) && statSync(target).isDirectory())
        throw new Error(`${target} is a folder: name the backup's file (${target}/plant-store.db, say)`);
      if (!force && existsSync(target)) throw new Error(`${target} exists already: name a new file, or add --force to replace it`);
      const result = await stoppable((signal) => backupSqlite(store, file, { replace: force, signal }));
      say(
        `backed up ${store} to ${result.file}: ${result.plants} plants, ${mib(result.bytes)}, integrity checked, in ${result.seconds.toFixed(1)} s`,
      );
    },
  },
};

/** `plant-store restore FILE`: the SQLite store replaced by a checked backup, while no server has it open. */
export const restoreCommand: Command = {
  name: 'restore',
  summary: 'replace the SQLite store by a backup, after checking it',
  usesStore: true,
  actions: {
    summary: 'replace the SQLite store by the backup FILE, after checking it',
    details:
      "Refused while a server has the store open (the store's journal mode cannot be changed then). " +
      'The replaced store is kept aside as <store>.replaced-<UTC time>; a backup of an older schema is migrated when the server starts.',
    args: [{ name: 'FILE', required: true, help: 'a backup made by the backup command (or any SQLite copy of a store)' }],
    run(given) {
      const file = given.args[0]!;
      const store = storePath('restore');
      const result = restoreSqlite(file, store);
      const older = result.schemaVersion < SQLITE_MIGRATIONS.length ? ` (the server migrates it to ${SQLITE_MIGRATIONS.length} when it starts)` : '';
      const kept = result.keptAt ? `; the replaced store is kept at ${result.keptAt}` : '';
      say(`restored ${store} from ${resolve(file)}: ${result.plants} plants, schema version ${result.schemaVersion}${older}${kept}`);
      return Promise.resolve();
    },
  },
};
