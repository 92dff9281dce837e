import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { openStore } from '../src/store/open.js';
import { openConnection, prepare } from '../src/store/sqlite/connection.js';
import { cpuSeconds, peakRssMb } from './proc.js';

/**
 * The import scenario's yardstick: the bare driver writing the same plants into a fresh store (the
 * service's own migrations make the schema), durably, in one transaction, with nothing else: no HTTP, no
 * parsing, no validation, no staging. On SQLite, one prepared INSERT per row (better-sqlite3); on
 * PostgreSQL, multi-row INSERTs from arrays (unnest) of 10,000 rows. Prints one JSON line.
 * Usage: node dist/bench/import-reference.js <DATABASE_URL> <rows>
 */

const [url = '', rowsText = '0'] = process.argv.slice(2);
const rows = Number(rowsText);
const store = await openStore({ databaseUrl: url, sqliteSynchronous: 'FULL', dbTimeoutMs: 60_000, pgPoolSize: 1, writeQueueLimit: 10 });
await store.close();
const name = (i: number) => `Monstera deliciosa number ${i}`;
const tag = (i: number) => `bulk-${i % 97}`;
const cpuBefore = cpuSeconds(process.pid)!;
const started = performance.now();
if (url.startsWith('file:')) {
  const db = openConnection(url.slice('file:'.length));
  db.exec('PRAGMA synchronous = FULL');
  const insert = prepare(db, 'INSERT INTO plants (id, name, tag, version) VALUES (?, ?, ?, ?)');
  db.exec('BEGIN');
  for (let i = 1; i <= rows; i++) insert.run(i, name(i), tag(i), i);
  db.exec('COMMIT');
  db.close();
} else {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('BEGIN');
  for (let first = 1; first <= rows; first += 10_000) {
    const ids: number[] = [];
    const names: string[] = [];
    const tags: string[] = [];
    for (let i = first; i < Math.min(rows + 1, first + 10_000); i++) {
      ids.push(i);
      names.push(name(i));
      tags.push(tag(i));
    }
    await client.query(
      "INSERT INTO plants (id, name, tag, version) SELECT id, name, tag, nextval('plant_version') FROM unnest($1::bigint[], $2::text[], $3::text[]) AS r (id, name, tag)",
      [ids, names, tags],
    );
  }
  await client.query('COMMIT');
  await client.end();
}
const seconds = (performance.now() - started) / 1000;
process.stdout.write(`${JSON.stringify({ rows, seconds, cpuSeconds: cpuSeconds(process.pid)! - cpuBefore, peakRssMb: peakRssMb(process.pid) })}\n`);
