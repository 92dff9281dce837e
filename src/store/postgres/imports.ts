import type pg from 'pg';
import { newEventId } from '../../model/events.js';
import { translatePgError } from './errors.js';
import { COMMIT_STATEMENT, eventsCte, KEY_COLUMN, keyCte } from './feed.js';
import { bodyFor, insertMessages } from './outbox.js';
import { int8 } from './query.js';
import { toPlant, type PlantRow } from '../rows.js';
import { importResult, type ImportOutcome, type ImportResult, type PlantImport } from '../plant-store.js';
import type { StoredPlant } from '../../model/plant.js';
import { toPlantId, type PlantId } from '../../model/plant-id.js';
import type { KeyClaim } from '../idempotency.js';
import type { KeptOutcome } from '../writes.js';
import { underKey } from './keys.js';
import type { Query } from './query.js';

/** The import's transaction may idle this long between chunks (a slow upload), and statements take as long as they need. */
const IMPORT_SESSION = `SET LOCAL idle_in_transaction_session_timeout = '10min'; SET LOCAL statement_timeout = 0`;

/**
 * Staged rows are read back this many at a time to announce them, so memory stays flat: a chunk's rows,
 * bodies and parameters die young, where 10,000 at a time were promoted to V8's old generation and grew
 * the heap, and with it a large import's peak RSS (measured in bench/RESULTS.md).
 */
const ANNOUNCE_CHUNK = 1000;

/** The staged rows after `after`, in id order, each saying whether the merge replaced a stored plant (it did not create it). */
const STAGED = `SELECT s.id::text AS id, s.name, s.tag, c.id IS NULL AS existed FROM import_stage s LEFT JOIN import_created c ON c.id = s.id
  WHERE $1::bigint IS NULL OR s.id > $1::bigint ORDER BY s.id LIMIT ${ANNOUNCE_CHUNK}`;

/**
 * The staged plants as they go into plants: one version for the whole import (each plant's still changes, and
 * is never reused). In id order, the order every write locks its plants in (group commit's batches too): two
 * imports of the same ids in other orders, each holding a plant the other waits for, deadlocked, and
 * PostgreSQL refused one of them.
 */
const STAGED_PLANTS = `SELECT id, name, tag, (SELECT nextval('plant_version')) FROM import_stage ORDER BY id`;

/**
 * The merge, one statement: each staged plant inserted, or the stored plant of its id replaced, and the ids
 * it inserted kept aside (`xmax = 0`: a row this statement inserted, not one it updated). The counts and
 * the events are read from what the merge did, not from a look at the store before it: at READ COMMITTED
 * a plant another request commits meanwhile is seen by the merge (it waits for it), and would otherwise be
 * replaced while announced and counted as created.
 */
const UPSERT = `WITH merged AS (INSERT INTO plants (id, name, tag, version) ${STAGED_PLANTS}
    ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag, version = EXCLUDED.version RETURNING id, xmax = 0 AS created)
  INSERT INTO import_created SELECT id FROM merged WHERE created`;

/**
 * The create-only merge, one statement: the staged plants inserted where no plant has the id (one committed
 * meanwhile included), and the first staged id that did not go in, if any: then the import is refused and
 * the insert rolled back.
 */
const INSERT_OR_FIRST_CONFLICT = `WITH inserted AS (INSERT INTO plants (id, name, tag, version) ${STAGED_PLANTS} ON CONFLICT (id) DO NOTHING RETURNING id)
  SELECT (SELECT min(s.id) FROM import_stage s WHERE NOT EXISTS (SELECT 1 FROM inserted i WHERE i.id = s.id))::text AS conflict`;

/** The same once the staged rows were inserted as new plants (the fast merge): every one was created. */
const STAGED_CREATED = `SELECT s.id::text AS id, s.name, s.tag, false AS existed FROM import_stage s
  WHERE $1::bigint IS NULL OR s.id > $1::bigint ORDER BY s.id LIMIT ${ANNOUNCE_CHUNK}`;

/** The merge into a store that had none of the staged ids: a plain insert in id order, one version for the whole import. */
const INSERT_NEW = `INSERT INTO plants (id, name, tag, version) ${STAGED_PLANTS}`;

/** unique_violation: a plant of a staged id was committed by someone else after the store was seen empty. */
const UNIQUE_VIOLATION = '23505';

/** One chunk's events (the change feed) and messages: the events as arrays, joined with the endpoints subscribed to each. */
const ANNOUNCE = `WITH m AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS m (event_id, type, payload, ord)),
  q AS (${insertMessages({ type: 'm.type', payload: 'm.payload', eventId: 'm.event_id', at: '$4::bigint', from: 'm' })}),
  ${keyCte(5)},
  ${eventsCte({ from: 'm', ord: '$6::int + m.ord', id: 'm.event_id', type: 'm.type', body: 'm.payload' })}
  SELECT (SELECT count(*) FROM q WHERE status = 'pending')::int AS queued, ${KEY_COLUMN}`;

/** The key of an import's events and how many messages it queued. */
interface Announced {
  key: string | null;
  queued: number;
}

/** A merge not committed yet: its counts, and what it announced. */
interface Merged {
  result: ImportResult;
  total: number;
  announced: Announced;
}

export interface ImportListeners {
  /** How many messages a committed import queued for delivery. */
  queued(count: number): void;
  /** A committed import recorded events. */
  recorded(): void;
}

/**
 * A bulk import on PostgreSQL: one transaction on a connection of its own for the whole import; rows are
 * staged in a temporary table (dropped at commit) in multi-row statements, then merged into `plants` in
 * one statement. Nothing is visible to anyone until the commit; a failure or an abort rolls all back.
 */
export async function postgresImport(pool: pg.Pool, listeners: ImportListeners): Promise<PlantImport> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
    await client.query(`BEGIN; ${IMPORT_SESSION}`);
    await client.query('CREATE TEMP TABLE import_stage (id bigint PRIMARY KEY, name text NOT NULL, tag text) ON COMMIT DROP');
  } catch (error) {
    throw translatePgError(error);
  }
  let done = false;
  let broken = false;
  /** Runs a statement of the import without the pool's per-query time limit (a merge of a million rows takes a while). */
  const run = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> => {
    try {
      // pg takes a query_timeout of 0 for "the client's default": give it the longest timer there is instead.
      return await client.query<R>({ text, values, query_timeout: 2 ** 31 - 1 } as pg.QueryConfig);
    } catch (error) {
      broken = true;
      throw translatePgError(error);
    }
  };
  const finish = async (statement: 'COMMIT' | 'ROLLBACK') => {
    done = true;
    try {
      await client.query(statement);
    } catch (error) {
      broken = true;
      throw translatePgError(error);
    } finally {
      client.release(broken);
    }
  };

  /**
   * The events (the change feed) and webhook messages of every staged plant, created or updated, made by
   * the same code as a single write's (outbox.ts, model/events.ts): the staged rows read back a chunk at a time,
   * before they are merged. Making the bodies and ids in SQL instead was slower (the PL/pgSQL id function
   * most of all; measured in bench/RESULTS.md). Answers the key of the import's events and how many
   * messages were queued.
   */
  const announce = async (at: number, staged: string): Promise<Announced> => {
    let queuedNow = 0;
    let key: string | null = null;
    let recorded = 0;
    for (let after: string | null = null; ;) {
      const { rows }: pg.QueryResult<PlantRow<string> & { existed: boolean }> = await run(staged, [after]);
      if (rows.length === 0) return { key, queued: queuedNow };
      const ids: string[] = [];
      const types: string[] = [];
      const payloads: string[] = [];
      for (const row of rows) {
        const type = row.existed ? 'plant.updated' : 'plant.created';
        ids.push(newEventId());
        types.push(type);
        payloads.push(bodyFor(type, toPlant(row), at));
      }
      const result: pg.QueryResult<{ queued: number; event_key: string }> = await run(ANNOUNCE, [ids, types, payloads, at, key, recorded]);
      const chunk = result.rows[0]!;
      queuedNow += chunk.queued;
      key = chunk.event_key;
      recorded += rows.length;
      after = rows.at(-1)!.id;
    }
  };

  /**
   * Into an empty store, the merge is a plain insert (no lookup of a stored plant per row, no conflict
   * handling), under a savepoint: should a plant of a staged id have been committed by someone else since
   * the store was seen empty, the insert fails on its key and is rolled back, and the commit merges as
   * into any store. Once the insert succeeded, every staged plant was created, with nothing to refuse.
   */
  const mergedIntoEmptyStore = async (): Promise<boolean> => {
    const { rows } = await run<{ empty: boolean }>('SELECT NOT EXISTS (SELECT 1 FROM plants) AS empty');
    if (!rows[0]!.empty) return false;
    await run('SAVEPOINT merge_new');
    try {
      await client.query({ text: INSERT_NEW, query_timeout: 2 ** 31 - 1 } as pg.QueryConfig);
    } catch (error) {
      if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) {
        broken = true;
        throw translatePgError(error);
      }
      await run('ROLLBACK TO SAVEPOINT merge_new');
      return false;
    }
    await run('RELEASE SAVEPOINT merge_new');
    return true;
  };

  /** Places the import's events in the change feed, commits, and tells the listeners. */
  const committed = async ({ result, total, announced }: Merged): Promise<ImportResult> => {
    // Last: the import's place in the change feed, under the commit lock until COMMIT (feed.ts).
    if (total > 0) await run(COMMIT_STATEMENT, [announced.key]);
    await finish('COMMIT');
    listeners.queued(announced.queued);
    if (total > 0) listeners.recorded();
    return result;
  };

  /** Merges the staged plants into the store, uncommitted; or, create-only, finds an id that exists already and merges nothing. */
  const merge = async (createOnly: boolean): Promise<Merged | { conflict: PlantId }> => {
    const merged = (total: number, replaced: number, announced: Announced): Merged => ({
      result: { created: total - replaced, replaced },
      total,
      announced,
    });
    if (await mergedIntoEmptyStore()) {
      const { rows } = await run<{ total: string }>('SELECT count(*) AS total FROM import_stage');
      return merged(Number(rows[0]!.total), 0, await announce(Date.now(), STAGED_CREATED));
    }
    const { rows: counted } = await run<{ total: string }>('SELECT count(*) AS total FROM import_stage');
    const total = Number(counted[0]!.total);
    if (total === 0) return merged(0, 0, { key: null, queued: 0 });
    if (createOnly) {
      // Under a savepoint: a refused import keeps nothing, even where its key's outcome is committed.
      await run('SAVEPOINT merge_created');
      const { rows } = await run<{ conflict: string | null }>(INSERT_OR_FIRST_CONFLICT);
      const conflict = rows[0]!.conflict;
      if (conflict !== null) {
        await run('ROLLBACK TO SAVEPOINT merge_created');
        return { conflict: toPlantId(conflict) };
      }
      await run('RELEASE SAVEPOINT merge_created');
      return merged(total, 0, await announce(Date.now(), STAGED_CREATED));
    }
    await run('CREATE TEMP TABLE import_created (id bigint PRIMARY KEY) ON COMMIT DROP');
    const { rowCount: created } = await run(UPSERT);
    return merged(total, total - (created ?? 0), await announce(Date.now(), STAGED));
  };

  /** Commits the merge (or, a create-only conflict, rolls it back): its outcome. */
  const finished = async (merged: Merged | { conflict: PlantId }): Promise<ImportOutcome> => {
    if ('conflict' in merged) {
      await finish('ROLLBACK');
      return { conflict: String(merged.conflict) };
    }
    return committed(merged);
  };

  /**
   * The commit under a key, claimed before the merge: a second import with the key waits on the claim for
   * this one, then finds its outcome, and rolls back.
   */
  const underClaim = async (claim: KeyClaim, createOnly: boolean): Promise<KeptOutcome<'import'>> => {
    const query: Query = (text, values) => run(text, values);
    const made: { merged?: Merged | { conflict: PlantId } } = {};
    const kept = await underKey(query, claim, 'import', async () => {
      const merged = (made.merged = await merge(createOnly));
      return 'conflict' in merged ? { conflict: String(merged.conflict) } : merged.result;
    });
    if (made.merged === undefined) await finish('ROLLBACK');
    // A conflict keeps its outcome and nothing else: the staged rows go with the commit (ON COMMIT DROP).
    else if ('conflict' in made.merged) await finish('COMMIT');
    else await committed(made.merged);
    return kept;
  };

  function settle(createOnly: boolean): Promise<ImportOutcome>;
  function settle(createOnly: boolean, claim: KeyClaim): Promise<KeptOutcome<'import'>>;
  function settle(createOnly: boolean, claim?: KeyClaim): Promise<ImportOutcome | KeptOutcome<'import'>>;
  async function settle(createOnly: boolean, claim?: KeyClaim): Promise<ImportOutcome | KeptOutcome<'import'>> {
    return claim === undefined ? finished(await merge(createOnly)) : underClaim(claim, createOnly);
  }

  return {
    // Not async: the rows are turned into the statement's columns at once and not held while it runs (an
    // async function's frame would keep them until it returns: plants/import.ts).
    add(rows: StoredPlant[]) {
      // One statement may not touch a row twice: the last row of an id wins within the chunk, as across chunks.
      const last = new Map<string, StoredPlant>();
      for (const row of rows) last.set(int8(row.id), row);
      const plants = [...last.values()];
      return run(
        `INSERT INTO import_stage (id, name, tag) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])
         ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag`,
        [[...last.keys()], plants.map((p) => p.name), plants.map((p) => p.tag ?? null)],
      ).then(() => undefined);
    },
    settle,
    async commit({ createOnly }): Promise<ImportResult> {
      return importResult(await settle(createOnly));
    },
    async abort() {
      if (!done) await finish('ROLLBACK').catch(() => undefined);
    },
  };
}
