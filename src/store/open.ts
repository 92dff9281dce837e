import type { Config } from '../config.js';
import { SqliteStore } from './sqlite.js';
import type { Store } from './store.js';

/** Opens the store DATABASE_URL names, migrating its schema to the current version. */
export async function openStore(config: Pick<Config, 'databaseUrl' | 'sqliteSynchronous' | 'dbTimeoutMs' | 'pgPoolSize'>): Promise<Store> {
  if (config.databaseUrl.startsWith('file:')) {
    return SqliteStore.open(config.databaseUrl, { synchronous: config.sqliteSynchronous, busyTimeoutMs: config.dbTimeoutMs });
  }
  throw new Error(`DATABASE_URL: PostgreSQL is not supported yet`);
}
