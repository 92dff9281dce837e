import { int8, named, type QueryBy } from './query.js';
import { batcher, stillWaiting, type Batcher, type BatcherSettings, type BatchTracer } from '../batcher.js';

/**
 * Reads of single plants by id, gathered: the GETs that arrive together share one statement
 * (`WHERE id = ANY($1)`) and one round trip, as writes share a batch (postgres/group-commit.ts). The service is
 * CPU-bound on its socket work (a write and a read per statement, each a system call that also runs the
 * loopback's network stack), so one statement for many reads is most of what a read costs saved.
 * While `maxInFlight` statements run, new reads wait and form the next one, so batches grow with the load
 * and a lone read goes at once (after the I/O callbacks of its turn). Each read sees every write committed
 * before it arrived: its statement is sent after it.
 */

export interface LookupRow {
  id: string;
  name: string;
  tag: string | null;
  version: string;
}

interface Pending {
  id: string;
  /** When its caller stops waiting (epoch ms): asked + the store's timeout. */
  deadline: number;
  resolve: (row: LookupRow | undefined) => void;
  reject: (error: unknown) => void;
  /** Its request's trace context (tracing on). */
  caller?: object | undefined;
}

export interface LookupSettings extends BatcherSettings {
  /** The longest a read waits in all (DB_TIMEOUT_MS). */
  timeoutMs: number;
}

// The ids go as one int8[] parameter of decimal text: no digit passes through a float.
const SQL = named('plant_lookup', 'SELECT id::text AS id, name, tag, version::text AS version FROM plants WHERE id = ANY($1::bigint[])');

export class PlantLookups {
  private readonly batcher: Batcher<Pending>;

  constructor(
    private readonly queryBy: QueryBy,
    private readonly settings: LookupSettings,
    /** Traces each statement (tracing on). */
    tracer?: BatchTracer,
  ) {
    this.batcher = batcher(settings, (batch) => this.read(batch), tracer);
  }

  /** The plant with this id and its version, as the row holds them, or undefined. */
  get(id: number | bigint): Promise<LookupRow | undefined> {
    return new Promise((resolve, reject) => {
      this.batcher.add({ id: int8(id), deadline: Date.now() + this.settings.timeoutMs, resolve, reject });
    });
  }

  /**
   * The plants with these ids, as rows, in no order (a batch read): one statement of their own, from the
   * same connections and within the same wait (DB_TIMEOUT_MS), so that all are read in one snapshot.
   */
  async many(ids: ReadonlyArray<number | bigint>): Promise<LookupRow[]> {
    const { rows } = await this.queryBy(Date.now() + this.settings.timeoutMs)<LookupRow>(SQL, [[...new Set(ids.map(int8))]]);
    return rows;
  }

  /** Reads a batch; resolves with the error that failed it, if one did. */
  private async read(waiting: Pending[]): Promise<unknown> {
    // A read whose caller's wait is over is not sent; the statement ends by its oldest read's deadline.
    const { live: batch, deadline } = stillWaiting(waiting, `PostgreSQL: no answer within DB_TIMEOUT_MS (${this.settings.timeoutMs} ms)`);
    if (batch.length === 0) return undefined;
    try {
      const ids = [...new Set(batch.map((pending) => pending.id))];
      const { rows } = await this.queryBy(deadline)<LookupRow>(SQL, [ids]);
      const found = new Map(rows.map((row) => [row.id, row]));
      for (const pending of batch) pending.resolve(found.get(pending.id));
      return undefined;
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return error;
    }
  }
}
