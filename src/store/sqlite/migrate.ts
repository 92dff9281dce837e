import type { AppliedMigration, Migrated } from '../migration.js';
import { prepare, type Connection } from './connection.js';
import { SQLITE_MIGRATIONS } from './migrations.js';

/** Applies the migrations not yet recorded, each in its own transaction; says which it applied, and whether none was before (a new store). */
export function migrate(db: Connection): Migrated {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set(prepare(db, 'SELECT version FROM schema_migrations').pluck().all() as number[]);
  const record = prepare(db, 'INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  const done: AppliedMigration[] = [];
  for (const m of SQLITE_MIGRATIONS) {
    if (applied.has(m.version)) continue;
    // IMMEDIATE takes the write lock first, so two processes starting at once apply each migration once.
    db.transaction(() => {
      const again = prepare(db, 'SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version);
      if (again) return;
      db.exec(m.sql);
      record.run(m.version, m.name, new Date().toISOString());
      done.push({ version: m.version, name: m.name });
    }).immediate();
  }
  return { created: applied.size === 0, applied: done };
}
