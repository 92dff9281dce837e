import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { StoreUnavailableError } from '../store.js';
import { identity } from './open-file.js';

/**
 * How often, at most, the file at the store's path is compared with the one opened, and a store that
 * refuses writes is tried with a write by /readyz: a stat or a commit a second costs nothing, and a
 * load balancer's probe or a request every few milliseconds must not each pay for one.
 */
const CHECK_INTERVAL_MS = 1000;

type HealthListener = (problem: StoreUnavailableError | undefined) => void;

/**
 * Whether the SQLite store can take writes, as far as the main thread knows (read by ping(), so by
 * /readyz). A batch that fails with an "unavailable" code (errors.ts: a full disk, a read-only or
 * vanished file, a lock held past busy_timeout) or a writer thread that dies makes the store unwritable
 * until the next batch that commits; the listeners hear of each change once, so that a full disk
 * refusing 20,000 writes logs two lines, not 20,000 (each refusal carries `reported`).
 *
 * With no write coming (a load balancer has taken the instance out), readiness comes back by ping()
 * committing a write of its own, once a second at most. A small commit can succeed on a disk that refuses
 * the writes in earnest (it fits in the space a failed batch left in the write-ahead log: seen on a full
 * tmpfs), and /readyz would then turn ready and not ready at each probe. So ping() tries none while the
 * store's filesystem has no free block, nor within a second of a batch that failed: while writes come
 * and fail, they decide.
 *
 * The store's file deleted or replaced under the running service (an operator's cleanup, an rsync
 * --delete) is worse: SQLite goes on committing into the unlinked inode without a word (in WAL mode
 * SQLITE_READONLY_DBMOVED does not fire), and the next start opens what is at the path, without those
 * writes. So the file's identity (device and inode) taken at open is compared with the file at the path
 * before a batch goes to the writer and at ping(), at most once a second (a flag read per batch, a stat
 * a second); once it differs the store refuses every write for good, until a restart opens the file now
 * there. `plant-store restore` is no such case: it refuses to run while a server has the store open, and
 * a store opened while it swaps the file records the file it ends up with (open-file.ts).
 */
export class StoreHealth {
  /** Why writes fail now; undefined while they commit, and before the first (not known: nothing says otherwise). */
  problem: StoreUnavailableError | undefined;
  /** The file at the path is not the one open: writes are refused until a restart. */
  private gone = false;
  /** Due: the file is compared again at the next batch or ping (set a second after each comparison). */
  private fileCheckDue: boolean;
  /** When ping() last tried a write on an unwritable store, and when a batch last failed as unavailable (ms). */
  private probedAt = 0;
  private failedAt = 0;
  private readonly listeners: HealthListener[] = [];

  constructor(
    private readonly path: string,
    /** The open file's identity (open-file.ts); undefined: none could be taken, and none is compared. */
    private readonly file: string | undefined,
  ) {
    this.fileCheckDue = file !== undefined;
  }

  onChange(listener: HealthListener): void {
    this.listeners.push(listener);
  }

  /** A batch failed as unavailable (its error made `reported`): the store turns unwritable, told once. */
  failed(error: StoreUnavailableError): void {
    this.failedAt = Date.now();
    if (this.problem !== undefined) return;
    this.problem = error;
    this.tell(error);
  }

  /** A batch committed: a store that was unwritable takes writes again, told once. */
  committed(): void {
    if (this.problem === undefined || this.gone) return;
    this.problem = undefined;
    this.tell(undefined);
  }

  /**
   * The error to refuse a batch with when the store's file is gone (compared at most once a second: a
   * flag read otherwise), or undefined.
   */
  fileRefusal(): StoreUnavailableError | undefined {
    if (this.gone) return this.problem;
    if (!this.fileCheckDue) return undefined;
    this.fileCheckDue = false;
    setTimeout(() => (this.fileCheckDue = true), CHECK_INTERVAL_MS).unref();
    let now: string | undefined;
    try {
      now = identity(this.path);
    } catch {
      // The folder unreadable (EACCES), say: that tells nothing of the file, which SQLite holds open.
      return undefined;
    }
    if (now === this.file) return undefined;
    this.gone = true;
    this.problem = new StoreUnavailableError(
      `the store's file was deleted or replaced while open: restart the service to open the file now at ${this.path} (if it was deleted, restore a backup there first: a start on no file makes a new, empty store); writes are refused until then`,
      { reported: true },
    );
    this.tell(this.problem);
    return this.problem;
  }

  /** Whether ping() should try a write on the unwritable store now (see above). */
  probeDue(): boolean {
    const now = Date.now();
    if (now - this.probedAt < CHECK_INTERVAL_MS || now - this.failedAt < CHECK_INTERVAL_MS) return false;
    this.probedAt = now;
    try {
      if (statfsSync(dirname(this.path)).bavail === 0) return false;
    } catch {
      // Not known: the write tells.
    }
    return true;
  }

  private tell(problem: StoreUnavailableError | undefined): void {
    for (const listener of this.listeners) listener(problem);
  }
}
