import type Database from 'better-sqlite3';

interface PendingWrite {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit. With synchronous=FULL every commit waits for an fsync, so one transaction per
 * request caps throughput at the disk's flush rate. Writes that arrive together (within one turn of
 * the event loop) share one transaction instead; each caller's promise settles only after that
 * transaction has committed, and if the commit fails every write in it fails.
 */
export class WriteBatcher {
  private pending: PendingWrite[] = [];
  private scheduled = false;
  private readonly commitBatch: (batch: PendingWrite[]) => unknown[];

  constructor(
    db: Database.Database,
    private readonly translate: (error: unknown) => unknown,
  ) {
    const transaction = db.transaction((batch: PendingWrite[]) => batch.map((write) => write.run()));
    // IMMEDIATE: take the write lock at BEGIN (waiting up to busy_timeout), so a batch that reads before
    // it writes cannot fail with SQLITE_BUSY_SNAPSHOT when another connection commits meanwhile.
    this.commitBatch = (batch) => transaction.immediate(batch);
  }

  write<T>(run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ run, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // setImmediate runs after the I/O callbacks of this turn, so requests parsed in the same
        // turn join the batch.
        setImmediate(this.flush);
      }
    });
  }

  private readonly flush = (): void => {
    const batch = this.pending;
    this.pending = [];
    this.scheduled = false;
    let results: unknown[];
    try {
      // One statement failing aborts the whole batch: a failed write here means the database
      // itself is in trouble, and a batch is committed whole or not at all.
      results = this.commitBatch(batch);
    } catch (error) {
      const translated = this.translate(error);
      for (const write of batch) write.reject(translated);
      return;
    }
    for (let i = 0; i < batch.length; i++) batch[i]!.resolve(results[i]);
  };
}
