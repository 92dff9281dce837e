import { batcher, type Batcher, type BatchTracer } from '../batcher.js';

/**
 * Reads asked during one turn of the event loop, run together at its end (setImmediate) rather than each
 * the moment it is asked. The answers to the requests of one turn then go out together, in a burst of
 * socket writes, instead of one between each request's parsing and the next's: a socket write to a peer
 * that is already awake costs the kernel far less than one that must wake it, which cuts the server's
 * CPU per GET /plants/{id} markedly (measured in bench/RESULTS.md). A read still sees every write
 * committed before it was asked: it runs after.
 *
 * The reads of one turn also share one read transaction (`together`): in WAL mode every transaction
 * begins by locking and reading the WAL index, which costs several times the CPU (mostly system calls) of
 * a read by primary key itself (measured in bench/RESULTS.md). Their snapshot is taken at the first read, after
 * every read of the batch was asked, so the rule above holds.
 */
interface AskedRead {
  read: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  caller?: object | undefined;
}

export class TurnReads {
  private readonly batcher: Batcher<AskedRead>;

  /**
   * `translate` turns a read's error into the store's (an outage: StoreUnavailableError); `together` runs
   * several reads in one read transaction; `tracer` traces each turn's reads (tracing on).
   */
  constructor(
    private readonly translate: (error: unknown) => Error,
    private readonly together: (reads: () => void) => void,
    tracer?: BatchTracer,
  ) {
    // No limit on batches or their size: the reads are synchronous, each batch runs to its end at once.
    this.batcher = batcher<AskedRead>({ maxInFlight: Infinity, maxBatch: Infinity }, (batch) => this.runBatch(batch), tracer);
  }

  private runBatch(batch: AskedRead[]): Promise<void> {
    const each = () => {
      for (const { read, resolve, reject } of batch) {
        try {
          resolve(read());
        } catch (error) {
          reject(this.translate(error));
        }
      }
    };
    if (batch.length === 1) each();
    else {
      try {
        this.together(each);
      } catch (error) {
        // The transaction could not begin (or end): the reads not yet answered fail (settling twice is a no-op).
        for (const { reject } of batch) reject(this.translate(error));
      }
    }
    return Promise.resolve();
  }

  run<T>(read: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.batcher.add({ read, resolve: resolve as (value: unknown) => void, reject });
    });
  }
}
