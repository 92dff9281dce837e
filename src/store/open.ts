import type { Config } from '../config.js';
import type { Store } from './store.js';

/**
 * Opens the store DATABASE_URL names, migrating its schema to the current version. Each store's
 * module is loaded only when used: the pg driver alone adds ~60 ms to a SQLite start, and the other way round.
 */
export async function openStore(config: Pick<Config, 'databaseUrl' | 'sqliteSynchronous' | 'dbTimeoutMs' | 'pgPoolSize'>): Promise<Store> {
  if (config.databaseUrl.startsWith('file:')) {
    const { SqliteStore } = await import('./sqlite.js');
    return SqliteStore.open(config.databaseUrl, { synchronous: config.sqliteSynchronous, busyTimeoutMs: config.dbTimeoutMs });
  }
  if (/^postgres(ql)?:\/\//.test(config.databaseUrl)) {
    const { PostgresStore } = await import('./postgres.js');
    return PostgresStore.open(config.databaseUrl, { poolSize: config.pgPoolSize, timeoutMs: config.dbTimeoutMs });
  }
  throw new Error('DATABASE_URL: must be a file: or postgres:// URL');
}
