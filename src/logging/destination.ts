import { writeSync } from 'node:fs';
import { pauseThread } from '../pause.js';

/** Routine lines wait until this many characters have gathered… */
const BATCH_CHARS = 16 * 1024;
/** …or this long has passed. */
const BATCH_MS = 50;

/**
 * A file descriptor (standard output) for the log, written in batches: one write system call per line
 * is, at tens of thousands of requests a second, a good share of what a request costs. Lines gather
 * until BATCH_CHARS or BATCH_MS, and everything is written when the process exits; the logger flushes
 * at once after a warning or an error (logging/logger.ts). A SIGKILL loses at most BATCH_MS of lines.
 *
 * Why not pino.destination (sonic-boom) with minLength: it appends each line to one growing string and
 * measures that string's UTF-8 length on every write, which costs many times more per line than this
 * (bench/log-lines.ts measures both; figures in bench/RESULTS.md).
 */
export class BatchedDestination {
  private chunks: string[] = [];
  private size = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly fd = 1) {
    process.on('exit', this.flush);
  }

  write(line: string): boolean {
    this.chunks.push(line);
    this.size += line.length;
    if (this.size >= BATCH_CHARS) this.flush();
    else this.timer ??= setTimeout(this.flush, BATCH_MS).unref();
    return true;
  }

  /** Writes everything gathered, now. */
  readonly flush = (): void => {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.size === 0) return;
    let data = Buffer.from(this.chunks.join(''));
    this.chunks = [];
    this.size = 0;
    while (data.length > 0) {
      try {
        data = data.subarray(writeSync(this.fd, data));
      } catch (error) {
        // A non-blocking pipe that is full: wait for its reader. Any other failure (the reader is gone)
        // drops the batch: a log that cannot be written must not stop the service.
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return;
        pauseThread(1);
      }
    }
  };

  /** Writes what is left and stops writing at exit (tests make many). */
  close(): void {
    this.flush();
    process.off('exit', this.flush);
  }
}
