import { databaseKind, redactUrl } from './database-url.js';
import type { BatchTracing } from './batcher.js';
import type { SqliteOptions } from './sqlite/store.js';
import type { CommitObserver, Store } from './store.js';

/**
 * What opening a store needs, named as the settings name it (the configuration's type has these fields,
 * checked where the server and the CLI pass it): the store knows nothing of the configuration.
 */
export interface StoreSettings {
  databaseUrl: string;
  sqliteSynchronous: SqliteOptions['synchronous'];
  dbTimeoutMs: number;
  pgPoolSize: number;
  pgReadPoolSize?: number | undefined;
  writeQueueLimit: number;
  databaseReadUrl?: string | undefined;
  readReplicaMaxLagMs?: number | undefined;
}

/**
 * Opens the store DATABASE_URL names, migrating its schema to the current version; the server and the
 * CLI both open it here. A failure says which setting to look at ("SQLITE_CANTOPEN" alone does not),
 * without the password. Each store's module is loaded only when used: the pg driver alone makes a SQLite
 * start noticeably slower (measured in bench/RESULTS.md), and the other way round. `onCommit` is told of
 * every commit of writes (metrics); `tracing` traces the store's batches (tracing on).
 */
export async function openStore(
  settings: StoreSettings,
  { onCommit, tracing }: { onCommit?: CommitObserver | undefined; tracing?: BatchTracing | undefined } = {},
): Promise<Store> {
  try {
    switch (databaseKind(settings.databaseUrl)) {
      case 'sqlite': {
        const { SqliteStore } = await import('./sqlite/store.js');
        return SqliteStore.open(settings.databaseUrl, {
          synchronous: settings.sqliteSynchronous,
          busyTimeoutMs: settings.dbTimeoutMs,
          writeQueueLimit: settings.writeQueueLimit,
          onCommit,
          tracing,
        });
      }
      case 'postgres': {
        const { PostgresStore } = await import('./postgres/store.js');
        return await PostgresStore.open(settings.databaseUrl, {
          poolSize: settings.pgPoolSize,
          readPoolSize: settings.pgReadPoolSize,
          timeoutMs: settings.dbTimeoutMs,
          writeQueueLimit: settings.writeQueueLimit,
          onCommit,
          tracing,
          replicas: settings.databaseReadUrl ? { url: settings.databaseReadUrl, maxLagMs: settings.readReplicaMaxLagMs ?? 5000 } : undefined,
        });
      }
      case undefined:
        throw new Error('must be a file: or postgres:// URL');
    }
  } catch (error) {
    throw new Error(`DATABASE_URL: cannot open ${redactUrl(settings.databaseUrl)}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
}
