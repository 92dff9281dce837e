import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openConnection, prepare, type Connection } from '../../../src/store/sqlite/connection.js';
import { MAX_TERMS, searchTerms } from '../../../src/store/sqlite/search-terms.js';
import { SqliteStore } from '../../../src/store/sqlite/store.js';
import { listPlants, tempDir } from '../../helpers.js';

import { sqliteBefore } from '../older-schema.js';
import { sleep, until } from '../../toolkit.js';

/**
 * The SQLite search index as derived data: kept by the writer thread after the writes commit, its mark
 * (counters.search_position) in the change feed, caught up at every start, rebuilt on demand.
 */

const open = (path: string) => SqliteStore.open(`file:${path}`, { synchronous: 'FULL', busyTimeoutMs: 2000 });

function mark(db: Connection): { position: number; last: number } {
  return {
    position: prepare(db, "SELECT value FROM counters WHERE name = 'search_position'").pluck().get() as number,
    last: prepare(db, 'SELECT coalesce(max(position), 0) FROM events').pluck().get() as number,
  };
}

/** The ids the index itself gives for an FTS5 query, the stored plants aside. */
function indexed(db: Connection, match: string): number[] {
  return prepare(db, 'SELECT rowid FROM plants_search WHERE plants_search MATCH ? ORDER BY rowid').pluck().all(match) as number[];
}

const caughtUp = (db: Connection) => until(() => mark(db).position === mark(db).last, 'the index catches up', { timeoutMs: 10_000 });

describe('sqlite search index, derived', () => {
  it('follows the writes in the background: the plants in the index, the mark at the last event', async () => {
    const path = join(tempDir(after), 'p.db');
    const store = open(path);
    const db = openConnection(path, { readonly: true });
    try {
      for (let id = 1; id <= 50; id++) await store.plants.put({ id, name: `Bird of Paradise ${id}` });
      await store.plants.patch(7, { name: 'renamed' });
      await store.plants.delete(8);
      await caughtUp(db);
      const expectedIds = Array.from({ length: 50 }, (_, i) => i + 1).filter((id) => id !== 7 && id !== 8);
      assert.deepEqual(indexed(db, '"par" AND "dis"'), expectedIds);
      assert.deepEqual(indexed(db, '"ren" AND "med"'), [7]);
      const triggers = prepare(db, "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'plants_search%'").pluck().all();
      assert.deepEqual(triggers, [], 'no write indexes in its own transaction');
    } finally {
      db.close();
      await store.close();
    }
  });

  it('indexes an import in bulk, in its own transaction: nothing left behind once it is answered', async () => {
    const path = join(tempDir(after), 'p.db');
    const store = open(path);
    const db = openConnection(path, { readonly: true });
    try {
      await store.plants.put({ id: 1, name: 'Jade before' });
      const session = await store.plants.startImport();
      await session.add(Array.from({ length: 3000 }, (_, i) => ({ id: i + 2, name: `Jade ${i}` })));
      await session.commit({ createOnly: false });
      assert.deepEqual(mark(db).position, mark(db).last, 'the mark at the last event as the import commits');
      assert.equal(indexed(db, '"jad"').length, 3001);
    } finally {
      db.close();
      await store.close();
    }
  });

  it('catches up at start from its mark with what a crash left unindexed', async () => {
    const path = join(tempDir(after), 'p.db');
    const first = open(path);
    for (let id = 1; id <= 30; id++) await first.plants.put({ id, name: `Calathea ${id}` });
    await first.close();
    // As a process killed before its index caught up leaves it: the mark back, the index without them.
    const raw = openConnection(path);
    prepare(raw, "UPDATE counters SET value = 0 WHERE name = 'search_position'").run();
    prepare(raw, 'DELETE FROM plants_search WHERE rowid > 10').run();
    raw.close();

    const second = open(path);
    const db = openConnection(path, { readonly: true });
    try {
      // Exact at once (the plants after the mark are read besides the index)…
      assert.equal(await second.plants.count({ q: 'calathea' }), 30);
      // …and indexed in the background, with no write to set it going.
      await caughtUp(db);
      assert.equal(indexed(db, '"cal" AND "hea"').length, 30);
    } finally {
      db.close();
      await second.close();
    }
  });

  it('rebuilds an index found wrong (plantstore reindex) from the plants, the mark at the last event', async () => {
    const path = join(tempDir(after), 'p.db');
    const store = open(path);
    const db = openConnection(path, { readonly: true });
    try {
      for (let id = 1; id <= 25; id++) await store.plants.put({ id, name: `Hoya ${id}` });
      await caughtUp(db);
      const raw = openConnection(path);
      prepare(raw, "INSERT INTO plants_search (plants_search) VALUES ('delete-all')").run();
      raw.close();
      assert.equal(await store.plants.count({ q: 'hoya' }), 0, 'an index emptied behind the store finds nothing');
      assert.equal(await store.searchIndex.rebuild(), 25);
      assert.equal(await store.plants.count({ q: 'hoya' }), 25);
      assert.deepEqual(mark(db).position, mark(db).last);
    } finally {
      db.close();
      await store.close();
    }
  });

  it('tells why it cannot catch up (the file locked by another process), once, and catches up once it can', async () => {
    const path = join(tempDir(after), 'p.db');
    const store = SqliteStore.open(`file:${path}`, { synchronous: 'FULL', busyTimeoutMs: 100 });
    const db = openConnection(path, { readonly: true });
    const told: string[] = [];
    store.searchIndex.onFailure((message) => told.push(message));
    try {
      await store.plants.put({ id: 1, name: 'Oxalis one' });
      await caughtUp(db);
      // Another process writes a plant and its event, then holds the write lock past the busy timeout:
      // the writer thread finds the write at its next check and cannot take a step.
      const other = openConnection(path);
      const body = '{"type":"plant.created","timestamp":"2026-01-01T00:00:00.000Z","data":{"id":2,"name":"Oxalis two"}}';
      other.exec(`BEGIN IMMEDIATE;
        INSERT INTO plants (id, name, tag, version, name_fold) VALUES (2, 'Oxalis two', NULL, 1000, 'oxalis two');
        INSERT INTO events (id, type, at, body) VALUES ('msg_other', 'plant.created', ${Date.now()}, '${body}');
        COMMIT; BEGIN IMMEDIATE`);
      await until(() => told.length > 0, 'the failure told', { timeoutMs: 15_000 });
      assert.match(told[0]!, /locked|busy/i);
      assert.equal(await store.plants.count({ q: 'oxalis' }), 2, 'searches stay exact meanwhile');
      // A window in which it tries again (it looks for others' writes every second): still told once.
      await sleep(1500);
      assert.equal(told.length, 1, 'told once while it keeps failing');
      other.exec('ROLLBACK');
      other.close();
      await caughtUp(db);
      assert.deepEqual(indexed(db, '"oxa"'), [1, 2]);
    } finally {
      db.close();
      await store.close();
    }
  });

  it('deletes expired events only once the index has read them', async () => {
    const path = join(tempDir(after), 'p.db');
    const store = open(path);
    const db = openConnection(path, { readonly: true });
    try {
      for (let id = 1; id <= 10; id++) await store.plants.put({ id, name: `Pilea ${id}` });
      // Every event expired at once, before the index had its turn: it reads them first.
      await store.events.deleteExpired(Date.now() + 1000);
      assert.equal(mark(db).position, mark(db).last);
      assert.equal(indexed(db, '"pil" AND "lea"').length, 10);
      assert.equal(await store.plants.count({ q: 'pilea' }), 10);
    } finally {
      db.close();
      await store.close();
    }
  });

  it('a store from before: migrated with its index current and its mark at the last event, triggers gone', async () => {
    const path = join(tempDir(after), 'p.db');
    const old = openConnection(path);
    sqliteBefore(old, 'search_index_derived');
    prepare(old, "INSERT INTO plants (id, name, tag, version, name_fold) VALUES (1, 'Old Fern', NULL, 1, 'old fern')").run();
    prepare(
      old,
      `INSERT INTO events (id, type, at, body) VALUES ('msg_1', 'plant.created', 1, '{"type":"plant.created","timestamp":"t","data":{"id":1,"name":"Old Fern"}}')`,
    ).run();
    old.close();
    const store = open(path);
    const db = openConnection(path, { readonly: true });
    try {
      assert.deepEqual(mark(db), { position: 1, last: 1 });
      assert.deepEqual(await listPlants(store.plants, { limit: 10, q: 'fern' }), [{ id: 1, name: 'Old Fern' }]);
      await store.plants.put({ id: 2, name: 'New Fern' });
      assert.deepEqual(
        (await listPlants(store.plants, { limit: 10, q: 'fern' })).map((p) => p.id),
        [1, 2],
      );
    } finally {
      db.close();
      await store.close();
    }
  });
});

describe('search terms: the trigrams of q a search looks up', () => {
  it('none below three characters; every distinct trigram up to the limit', () => {
    assert.deepEqual(searchTerms(''), []);
    assert.deepEqual(searchTerms('ab'), []);
    assert.deepEqual(searchTerms('😀a'), [], 'characters are code points, not UTF-16 units');
    assert.deepEqual(searchTerms('fern'), ['fer', 'ern']);
    assert.deepEqual(searchTerms('aaaa'), ['aaa']);
    assert.deepEqual(searchTerms('𐐨𐐩 d'), ['𐐨𐐩 ', '𐐩 d']);
  });

  it('at most a few, each a substring of q, of the most distinct characters first, spread over q', () => {
    const q = `${'a'.repeat(49)}b${'a'.repeat(49)}b`;
    const terms = searchTerms(q);
    assert.ok(terms.length <= MAX_TERMS);
    assert.ok(!terms.includes('aaa'), 'the trigram every crafted name holds many times over is left out');
    for (const term of terms) assert.ok(q.includes(term));
    const long = 'the quick brown fox jumps over the lazy dog';
    const chosen = searchTerms(long);
    assert.equal(chosen.length, MAX_TERMS);
    assert.equal(chosen[0], 'the', 'from the start…');
    assert.equal(chosen.at(-1), 'dog', '…to the end');
    for (const term of chosen) assert.equal(new Set(term).size, 3);
  });
});
