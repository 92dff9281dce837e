import { existsSync } from 'node:fs';
import { loadConfig, type Config } from '../config/config.js';
import { databaseKind, redactUrl, sqlitePath } from '../store/database-url.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';

/**
 * Opens the store DATABASE_URL names (the server's), runs `work`, and closes it. A SQLite file that does
 * not exist yet is refused, naming the path it resolved to: run from another folder, a relative
 * DATABASE_URL would otherwise make a new, empty store there that no server reads. Only the server and
 * `plant-store migrate` (`create`) make a store. `work` is given the store's name too (storeName), for the
 * line that says what was written where.
 */
export async function withStore<T>(work: (store: Store, config: Config, where: string) => Promise<T>, { create = false } = {}): Promise<T> {
  const config = loadConfig();
  if (!create && databaseKind(config.databaseUrl) === 'sqlite') {
    const file = sqlitePath(config.databaseUrl);
    if (!existsSync(file)) {
      const relative = !config.databaseUrl.startsWith('file:/');
      const given = `DATABASE_URL=${config.databaseUrl}${process.env.DATABASE_URL ? '' : ', the default'}${relative ? `, relative to ${process.cwd()}` : ''}`;
      throw new Error(
        `no store at ${file} (${given}): run this where the server runs, or set DATABASE_URL to the server's store; "plant-store migrate" makes a new one`,
      );
    }
  }
  const store = await openStore(config);
  try {
    return await work(store, config, storeName(config.databaseUrl));
  } finally {
    await store.close();
  }
}

/**
 * The store a DATABASE_URL names, as a command that wrote to it says: the SQLite file's absolute path, or
 * the PostgreSQL URL without its password. A write into a store nobody meant (a leftover ./data/plant-store.db
 * while the server runs on PostgreSQL) is then seen at once.
 */
export function storeName(databaseUrl: string): string {
  return databaseKind(databaseUrl) === 'sqlite' ? sqlitePath(databaseUrl) : redactUrl(databaseUrl);
}
