import type pg from 'pg';
import { isUnavailable, translatePgError } from './errors.js';
import type { FailoverPool } from './hosts/hosts.js';

/** One statement on the pool, its errors already translated (an outage: StoreUnavailableError). */
export type Query = <R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[]) => Promise<pg.QueryResult<R>>;

/** Where lists, counts and exports read: the primary's, or replicas that may be a little behind it. */
export interface PlantReads {
  query: Query;
  connect(): Promise<pg.PoolClient>;
}

/**
 * Runs `work` in one transaction on one connection of the pool: committed whole, or rolled back. It ends
 * by `deadline` (epoch ms) when one is given, else within the store's timeout from now.
 */
export type Transaction = <T>(work: (query: Query) => Promise<T>, deadline?: number) => Promise<T>;

/** A Query whose calls end by `deadline` (epoch ms) rather than the store's timeout from the moment of each call. */
export type QueryBy = (deadline: number) => Query;

/**
 * One deadline for a store call's whole wait: finding a connection (over every host) and then its
 * statements share `timeoutMs`, rather than each step having it anew. The server's statement_timeout
 * stops a statement that runs long; the client stops waiting at the deadline, in case the server itself
 * cannot be heard from, and drops that connection.
 */
export function poolQuery(pool: FailoverPool, timeoutMs: number): Query {
  const by = poolQueryBy(pool);
  return (text, values) => by(Date.now() + timeoutMs)(text, values);
}

/** poolQuery with a deadline of the caller's (a batch of writes ends by its oldest write's deadline). */
export function poolQueryBy(pool: FailoverPool): QueryBy {
  return (deadline) => async (text, values) => {
    const client = await connectBy(pool, deadline);
    try {
      const result = await client.query(untilDeadline(text, values, deadline));
      client.release();
      return result;
    } catch (error) {
      client.release(dropsConnection(error));
      throw translatePgError(error);
    }
  };
}

export function poolTransaction(pool: FailoverPool, timeoutMs: number): Transaction {
  return async (work, deadline = Date.now() + timeoutMs) => {
    const client = await connectBy(pool, deadline);
    // A connection that failed mid-transaction, or still runs a statement given up on, is closed (the
    // server rolls back); one that merely refused a statement is rolled back and kept.
    let broken = false;
    const query: Query = async (text, values) => {
      try {
        return await client.query(untilDeadline(text, values, deadline));
      } catch (error) {
        if (dropsConnection(error)) broken = true;
        throw translatePgError(error);
      }
    };
    try {
      await query('BEGIN', []);
      const result = await work(query);
      await query('COMMIT', []);
      return result;
    } catch (error) {
      if (!broken) await client.query(untilDeadline('ROLLBACK', [], deadline)).catch(() => (broken = true));
      throw error;
    } finally {
      client.release(broken);
    }
  };
}

async function connectBy(pool: FailoverPool, deadline: number): Promise<pg.PoolClient> {
  try {
    return await pool.connectBy(deadline);
  } catch (error) {
    throw translatePgError(error);
  }
}

/** The texts of named statements, and their names. */
const names = new Map<string, string>();

/**
 * Makes `text` a named (prepared) statement wherever it is sent: each connection parses and plans it
 * once, then only binds and executes it (pg keeps it by name per connection). For the statements sent
 * most: a named statement serves markedly more rows per second than the same text unnamed (measured
 * with `npm run bench:drivers`; figures in bench/RESULTS.md). Returns the text.
 */
export function named(name: string, text: string): string {
  names.set(text, name);
  return text;
}

/** A statement whose client-side wait ends at the deadline (pg's query_timeout, missing from its typings). */
function untilDeadline(text: string, values: unknown[], deadline: number): pg.QueryConfig {
  const config = { text, values, query_timeout: Math.max(1, deadline - Date.now()) } as pg.QueryConfig;
  const name = names.get(text);
  if (name !== undefined) config.name = name;
  return config;
}

/** A connection that failed, or still runs a statement given up on, must not serve again. */
function dropsConnection(error: unknown): boolean {
  return isUnavailable(error);
}

/** An int8 as a query parameter: decimal text, so that no digit ever passes through a float. */
export function int8(value: number | bigint): string {
  return typeof value === 'bigint' ? value.toString() : String(value);
}
