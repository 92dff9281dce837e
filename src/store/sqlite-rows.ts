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

/**
 * A plants row as JSON text: `{"id":…,"name":…}`, with `"tag":…` when it has one. SQLite's JSON escaping
 * is JSON.stringify's, byte for byte (the store contract tests check every UTF-16 code unit), and ids are
 * written as exact integers.
 */
export const PLANT_JSON = `CASE WHEN tag IS NULL THEN json_object('id', id, 'name', name) ELSE json_object('id', id, 'name', name, 'tag', tag) END`;

/** One page as [json, count, last id, more] (read raw, with safeIntegers): `where` picks the rows, `@tag` and `@after` its parameters. */
export function pageSql(where: string, tagged: boolean): string {
  return `WITH page AS (SELECT id, name, tag FROM plants ${where} ORDER BY id LIMIT @limit)
    SELECT json_group_array(${PLANT_JSON} ORDER BY id), count(*), max(id),
           EXISTS (SELECT 1 FROM plants WHERE ${tagged ? 'tag = @tag AND ' : ''}id > (SELECT max(id) FROM page))
    FROM page`;
}

/** A page's row as pageSql reads it. */
export type PageRow = [json: string, count: bigint, last: bigint | null, more: bigint];

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
