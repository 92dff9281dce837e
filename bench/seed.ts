import { foldCase } from '../src/model/fold.js';
import { openConnection, prepare } from '../src/store/sqlite/connection.js';
import { SqliteStore } from '../src/store/sqlite/store.js';
import { catalogueName, SEED_TAGS, seedName, type SeedNames } from './names.js';

/**
 * Fills a fresh SQLite store with plants 1..count straight through SQLite, in one transaction: seeding
 * a million plants over HTTP would take longer than the whole benchmark. The schema comes from the
 * service's own migrations, so the seeded file is exactly what the service would have written.
 */
export async function seedSqlite(path: string, count: number, names: SeedNames = 'varied'): Promise<void> {
  const nameOf = names === 'catalogue' ? catalogueName : seedName;
  const store = SqliteStore.open(`file:${path}`, { synchronous: 'NORMAL', busyTimeoutMs: 5000 });
  await store.close();
  const db = openConnection(path);
  try {
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = OFF');
    // name_fold as the service writes it, and the search index made from it as `plant-store reindex`
    // makes it (the service indexes what the change feed names; these plants have no events).
    const insert = prepare(db, 'INSERT INTO plants (id, name, tag, name_fold) VALUES (?, ?, ?, ?)');
    db.transaction(() => {
      for (let id = 1; id <= count; id++) {
        const name = nameOf(id);
        insert.run(id, name, SEED_TAGS[id % 4], foldCase(name));
      }
      prepare(db, 'INSERT INTO plants_search (rowid, name_fold) SELECT id, name_fold FROM plants').run();
    })();
    prepare(db, "INSERT INTO plants_search (plants_search) VALUES ('optimize')").run();
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}
