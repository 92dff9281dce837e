import type Database from 'better-sqlite3';
import { toPlantId } from '../plants/id.js';
import type { Plant } from './store.js';

/**
 * What the main thread and the writer thread share about the SQLite database: how a connection is set
 * up, how rows become plants, and which errors mean "unavailable". Nothing here starts a thread.
 */

export interface SqliteConnectionSettings {
  /** FULL (default): a commit survives power loss. NORMAL: faster, may lose the last commits on power loss. */
  synchronous: 'FULL' | 'NORMAL';
  /** How long a write waits for another connection's lock (the CLI's, say) before it fails. */
  busyTimeoutMs: number;
}

export function configureConnection(db: Database.Database, settings: SqliteConnectionSettings): void {
  // exec, not pragma(): see sqlite-connection.ts.
  db.exec(`PRAGMA busy_timeout = ${settings.busyTimeoutMs}`);
  db.exec(`PRAGMA synchronous = ${settings.synchronous}`);
  // Deleting a webhook endpoint deletes its messages (ON DELETE CASCADE).
  db.exec('PRAGMA foreign_keys = ON');
}

/** A plant row as read with safeIntegers: ids as bigint, exact. */
export interface PlantRow {
  id: bigint;
  name: string;
  tag: string | null;
}

export function toPlant(row: PlantRow): Plant {
  const id = toPlantId(row.id);
  return row.tag === null ? { id, name: row.name } : { id, name: row.name, tag: row.tag };
}

/** Result codes that mean the database cannot be used right now, as opposed to a bug in a query. */
const UNAVAILABLE = /^SQLITE_(FULL|IOERR|READONLY|BUSY|LOCKED|CANTOPEN|NOMEM|PROTOCOL|CORRUPT|NOTADB)/;

/** An error thrown by better-sqlite3, classified: only an error with an "unavailable" code is an outage. */
export interface ClassifiedError {
  unavailable: boolean;
  code: string | undefined;
  message: string;
}

export function classifySqliteError(error: unknown): ClassifiedError {
  const code = (error as { code?: unknown } | null)?.code;
  const text = typeof code === 'string' ? code : undefined;
  return {
    unavailable: text !== undefined && UNAVAILABLE.test(text),
    code: text,
    message: error instanceof Error ? error.message : String(error),
  };
}
