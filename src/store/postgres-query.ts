import type pg from 'pg';

/** One statement on the pool, its errors already translated (an outage: StoreUnavailableError). */
export type Query = <R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[]) => Promise<pg.QueryResult<R>>;
