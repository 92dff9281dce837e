import type pg from 'pg';
import type { ExportOptions, PlantExport } from '../store.js';
import type { StoredPlant } from '../../model/plant.js';
import { translatePgError } from './errors.js';
import type { PlantReads } from './query.js';
import { toPlant, type PlantRow } from '../rows.js';
import { countStatement, exportStatement } from './list-sql.js';

/** Plants are exported this many at a time, each chunk from the export's own snapshot. */
const EXPORT_CHUNK = 1000;
/** An export holds its transaction open while the client reads: it may idle this long. */
const LONG_IDLE = '10min';

/**
 * Opens a snapshot to export from: one REPEATABLE READ transaction on a connection of its own, its plants
 * read through a cursor a chunk at a time (one statement, however the list is ordered and filtered).
 */
export async function openExport(reads: PlantReads, options: ExportOptions): Promise<PlantExport> {
  let client: pg.PoolClient;
  try {
    client = await reads.connect();
  } catch (error) {
    throw translatePgError(error);
  }
  const snapshot = new PostgresExport(client, options);
  try {
    await snapshot.begin();
  } catch (error) {
    await snapshot.close();
    throw error;
  }
  return snapshot;
}

class PostgresExport implements PlantExport {
  private released = false;
  private broken = false;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly options: ExportOptions,
  ) {}

  async begin(): Promise<void> {
    // The snapshot is taken at the first query, not at BEGIN: take it now, when the export was asked for.
    await this.run(
      `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL idle_in_transaction_session_timeout = '${LONG_IDLE}'; SELECT 1 FROM plants LIMIT 1`,
      [],
    );
  }

  async count(): Promise<number> {
    const { text, values } = countStatement(this.options);
    const { rows } = await this.run<{ count: string }>(text, values);
    return Number(rows[0]!.count);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<StoredPlant[]> {
    try {
      const { text, values } = exportStatement(this.options);
      await this.run(`DECLARE plants_export NO SCROLL CURSOR FOR ${text}`, values);
      for (;;) {
        const { rows }: pg.QueryResult<PlantRow<string>> = await this.run<PlantRow<string>>(`FETCH ${EXPORT_CHUNK} FROM plants_export`, []);
        if (rows.length > 0) yield rows.map(toPlant);
        if (rows.length < EXPORT_CHUNK || this.released) break;
      }
    } finally {
      await this.close();
    }
  }

  /** Ended early (the client went away) or not: the snapshot is released and the connection given back. */
  async close(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.client.query('ROLLBACK').catch(() => (this.broken = true));
    this.client.release(this.broken);
  }

  private async run<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.client.query<R>(text, values);
    } catch (error) {
      this.broken = true;
      throw translatePgError(error);
    }
  }
}
