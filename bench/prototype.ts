import type { ServerResponse } from 'node:http';
import { answer, fail, servePlantPosts } from './bare-http.js';
import pg from 'pg';
import { openConnection, prepare } from '../src/store/sqlite/connection.js';

/**
 * The durable prototype (issue 21): the least a node:http server does to store a plant durably. It reads
 * the body, JSON.parse, checks the bearer header and the field types as the baseline does, and stores
 * every request of one event-loop turn in one transaction, answering each only after that commit. SQLite:
 * better-sqlite3 on the main thread, WAL, synchronous=FULL. PostgreSQL: pg, one multi-row upsert per turn.
 * No versions, no events, no webhooks, no logs: the service is measured as a share of this, to see what
 * costs more than the durable write itself. Usage: DATABASE_URL=file:… or postgres://… node dist/bench/prototype.js
 */

const URL_ = process.env.DATABASE_URL ?? '';

interface Pending {
  id: number;
  name: string;
  tag: string | null;
  res: ServerResponse;
  body: string;
}

/** Stores one turn's plants; resolves once they are durable. */
type Commit = (batch: Pending[]) => Promise<void>;

function sqliteCommit(path: string): Commit {
  const db = openConnection(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = FULL');
  db.exec('CREATE TABLE IF NOT EXISTS plants (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tag TEXT)');
  const upsert = prepare<[number, string, string | null]>(
    db,
    'INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name, tag = excluded.tag',
  );
  const transaction = db.transaction((batch: Pending[]) => {
    for (const p of batch) upsert.run(p.id, p.name, p.tag);
  });
  return (batch) => {
    transaction(batch);
    return Promise.resolve();
  };
}

function postgresCommit(url: string): Commit {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // The bench gives each run a new, empty database, as SQLite's prototype gets a new file.
  const table = pool.query('CREATE TABLE IF NOT EXISTS plants (id bigint PRIMARY KEY, name text NOT NULL, tag text)');
  return async (batch) => {
    await table;
    await pool.query(
      `INSERT INTO plants (id, name, tag) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag`,
      [batch.map((p) => p.id), batch.map((p) => p.name), batch.map((p) => p.tag)],
    );
  };
}

const commit = URL_.startsWith('postgres') ? postgresCommit(URL_) : sqliteCommit(URL_.replace(/^file:/, ''));
let turn: Pending[] = [];

function flush(): void {
  const batch = turn;
  turn = [];
  commit(batch).then(
    () => {
      for (const p of batch) answer(p.res, 200, p.body);
    },
    (error: unknown) => {
      process.stderr.write(`prototype: commit failed: ${String(error)}\n`);
      for (const p of batch) fail(p.res, 503, 'the store is unavailable');
    },
  );
}

servePlantPosts('prototype', ({ id, name, tag }, res) => {
  if (turn.length === 0) setImmediate(flush);
  turn.push({ id, name, tag: tag ?? null, res, body: JSON.stringify({ name, tag }) });
});
