import type pg from 'pg';
import { translatePgError } from './postgres-errors.js';

/** One statement on the pool, its errors already translated (an outage: StoreUnavailableError). */
export type Query = <R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[]) => Promise<pg.QueryResult<R>>;

/** Runs `work` in one transaction on one connection of the pool: committed whole, or rolled back. */
export type Transaction = <T>(work: (query: Query) => Promise<T>) => Promise<T>;

export function poolQuery(pool: pg.Pool): Query {
  return async (text, values) => {
    try {
      return await pool.query(text, values);
    } catch (error) {
      throw translatePgError(error);
    }
  };
}

export function poolTransaction(pool: pg.Pool): Transaction {
  return async (work) => {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw translatePgError(error);
    }
    const query: Query = async (text, values) => {
      try {
        return await client.query(text, values);
      } catch (error) {
        throw translatePgError(error);
      }
    };
    let broken = false;
    try {
      await query('BEGIN', []);
      const result = await work(query);
      await query('COMMIT', []);
      return result;
    } catch (error) {
      // A connection that failed mid-transaction is not given back to the pool.
      await client.query('ROLLBACK').catch(() => (broken = true));
      throw error;
    } finally {
      client.release(broken);
    }
  };
}

/** An int8 as a query parameter: decimal text, so that no digit ever passes through a float. */
export function int8(value: number | bigint): string {
  return typeof value === 'bigint' ? value.toString() : String(value);
}
