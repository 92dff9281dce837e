import Database from 'better-sqlite3';
import { foldCase } from '../../model/fold.js';

/**
 * The one way to open an SQLite connection and prepare a statement (ESLint refuses better-sqlite3's own
 * elsewhere). Every connection and statement is kept until its thread ends, never left to the garbage
 * collector, because of a Node 24 difference: from Node 24.19, node::ObjectWrap's destructor (compiled
 * into better-sqlite3 12 from Node's headers) removes an environment cleanup hook and asserts a current
 * Environment, and a collection started by one of V8's own tasks runs outside any JavaScript context, so
 * a Database or Statement collected there aborts the whole process ("Assertion failed: (env) !=
 * nullptr"). better-sqlite3 13 no longer uses ObjectWrap but needs Node 22, and the service still runs on
 * Node 20. Kept objects are freed by Node's cleanup hooks when their thread ends, inside a context.
 *
 * Statements are cached by their SQL per connection, so preparing where a statement is used costs a map
 * lookup and never grows memory; `db.pragma()` would prepare a statement at every call: set pragmas with
 * `db.exec('PRAGMA …')` and read them with a prepared statement.
 */
const connections = new Map<Database.Database, Map<string, Database.Statement>>();

export type Connection = Database.Database;

export function openConnection(path: string, options?: Database.Options): Connection {
  const db = new Database(path, options);
  connections.set(db, new Map());
  // The name under Unicode case folding, as search compares names (model/fold.ts): the writes store it in
  // plants.name_fold, the migration that added that column fills it. A function of the service, not of the
  // schema: no trigger or index calls it, so other programs (the sqlite3 shell) can still use the file.
  db.function('plant_fold', { deterministic: true }, (name: unknown) => (typeof name === 'string' ? foldCase(name) : null));
  return db;
}

/** The statement for this SQL on this connection, prepared at its first use and kept. */
export function prepare<Params extends unknown[] | object = unknown[], Row = unknown>(db: Connection, sql: string): Database.Statement<Params, Row> {
  const statements = connections.get(db);
  if (statements === undefined) throw new Error('prepare() needs a connection from openConnection()');
  let statement = statements.get(sql);
  if (statement === undefined) {
    statement = db.prepare(sql);
    statements.set(sql, statement);
  }
  return statement as unknown as Database.Statement<Params, Row>;
}

export interface SqliteConnectionSettings {
  /** FULL (default): a commit survives power loss. NORMAL: faster, may lose the last commits on power loss. */
  synchronous: 'FULL' | 'NORMAL';
  /** How long a write waits for another connection's lock (the CLI's, say) before it fails. */
  busyTimeoutMs: number;
}

export function configureConnection(db: Connection, settings: SqliteConnectionSettings): void {
  // exec, not pragma(): see above.
  db.exec(`PRAGMA busy_timeout = ${settings.busyTimeoutMs}`);
  db.exec(`PRAGMA synchronous = ${settings.synchronous}`);
  // Deleting a webhook endpoint deletes its messages (ON DELETE CASCADE).
  db.exec('PRAGMA foreign_keys = ON');
  // The TEMP database holds only an import's staging table, written once and read once in order: 2 MB
  // of cache is enough (it spills to a temporary file), where the default 16 MB raised the peak RSS of a
  // large import (measured in bench/RESULTS.md).
  db.exec('PRAGMA temp.cache_size = -2000');
}
