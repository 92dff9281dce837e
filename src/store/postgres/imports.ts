import type pg from 'pg';
import { DISABLED_AT_EVENT } from '../../webhooks/reasons.js';
import { translatePgError } from './errors.js';
import { int8 } from './query.js';
import { ImportConflictError, type ImportResult, type Plant, type PlantImport } from '../store.js';
import { toPlantId } from '../../plants/id.js';

/** The import's transaction may idle this long between chunks (a slow upload), and statements take as long as they need. */
const IMPORT_SESSION = `SET LOCAL idle_in_transaction_session_timeout = '10min'; SET LOCAL statement_timeout = 0`;

/**
 * The webhook messages of an import, made by the database from the staged rows (one event each,
 * created or updated, the same body shape as src/webhooks/events.ts makes), before the rows are merged.
 */
const ANNOUNCE = `
WITH ev AS MATERIALIZED (
  SELECT plant_store_event_id() AS event_id, CASE WHEN p.id IS NULL THEN 'plant.created' ELSE 'plant.updated' END AS type, s.id, s.name, s.tag
  FROM import_stage s LEFT JOIN plants p ON p.id = s.id
), q AS (
  INSERT INTO webhook_messages (endpoint_id, event_id, type, payload, occurred_at, status, next_attempt_at, last_error)
  SELECT e.id, ev.event_id, ev.type,
         '{"type":"' || ev.type || '","timestamp":"' || $1 || '","data":{"id":' || ev.id::text || ',"name":' || to_json(ev.name)::text ||
           CASE WHEN ev.tag IS NULL THEN '' ELSE ',"tag":' || to_json(ev.tag)::text END || '}}',
         $2::bigint, CASE WHEN e.enabled THEN 'pending' ELSE 'failed' END, CASE WHEN e.enabled THEN $2::bigint END,
         CASE WHEN e.enabled THEN NULL ELSE $3 END
  FROM ev JOIN webhook_endpoints e ON ev.type = ANY (e.events)
  RETURNING status
)
SELECT count(*) FILTER (WHERE status = 'pending')::int AS queued FROM q`;

/**
 * A bulk import on PostgreSQL: one transaction on a connection of its own for the whole import; rows are
 * staged in a temporary table (dropped at commit) in multi-row statements, then merged into `plants` in
 * one statement. Nothing is visible to anyone until the commit; a failure or an abort rolls all back.
 */
export async function postgresImport(pool: pg.Pool, queued: (count: number) => void): Promise<PlantImport> {
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

  return {
    async add(rows: Plant[]) {
      // One statement may not touch a row twice: the last row of an id wins within the chunk, as across chunks.
      const last = new Map<string, Plant>();
      for (const row of rows) last.set(int8(row.id), row);
      const ids = [...last.keys()];
      const plants = [...last.values()];
      await run(
        `INSERT INTO import_stage (id, name, tag) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])
         ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag`,
        [ids, plants.map((p) => p.name), plants.map((p) => p.tag ?? null)],
      );
    },
    async commit({ createOnly }): Promise<ImportResult> {
      if (createOnly) {
        const { rows } = await run<{ id: string }>('SELECT s.id::text AS id FROM import_stage s JOIN plants p ON p.id = s.id LIMIT 1');
        if (rows[0]) {
          await finish('ROLLBACK');
          throw new ImportConflictError(toPlantId(rows[0].id));
        }
      }
      const { rows: counts } = await run<{ total: string; replaced: string }>(
        'SELECT count(*) AS total, count(p.id) AS replaced FROM import_stage s LEFT JOIN plants p ON p.id = s.id',
      );
      const total = Number(counts[0]!.total);
      const replaced = Number(counts[0]!.replaced);
      let messages = 0;
      if (total > 0) {
        const at = Date.now();
        const { rows: subscribed } = await run<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM webhook_endpoints) AS any');
        if (subscribed[0]!.any)
          messages = (await run<{ queued: number }>(ANNOUNCE, [new Date(at).toISOString(), at, DISABLED_AT_EVENT])).rows[0]!.queued;
        // One version for the whole import: each plant's version still changes, and is never reused.
        await run(
          `INSERT INTO plants (id, name, tag, version) SELECT id, name, tag, (SELECT nextval('plant_version')) FROM import_stage
           ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag, version = EXCLUDED.version`,
        );
      }
      await finish('COMMIT');
      queued(messages);
      return { created: total - replaced, replaced };
    },
    async abort() {
      if (!done) await finish('ROLLBACK').catch(() => undefined);
    },
  };
}
