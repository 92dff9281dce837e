import { writeSync } from 'node:fs';

/**
 * Standard output for the server's log lines, written in batches. pino's default destination makes
 * one write system call per line, which at tens of thousands of requests a second is a good share of
 * the CPU a request costs. Routine lines (info and below: the access log) are gathered and written
 * together when 16 KiB have gathered or 50 ms have passed; a line above info (warn, error, fatal) is
 * written at once with everything before it, and all is written when the process exits. A process
 * killed with SIGKILL loses at most the last 50 ms of routine lines.
 */

const MAX_BYTES = 16 * 1024;
const MAX_DELAY_MS = 50;

/** pino's line starts {"level":NN, — 10, 20 and 30 are trace, debug and info. */
function isRoutine(line: string): boolean {
  const tens = line.charCodeAt(9);
  return line.startsWith('{"level":') && tens >= 0x31 && tens <= 0x33 && line.charCodeAt(10) === 0x30 && line.charCodeAt(11) === 0x2c;
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export class BatchedLogStream {
  private chunks: string[] = [];
  private size = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly fd = 1) {
    process.on('exit', this.flush);
  }

  write(line: string): boolean {
    this.chunks.push(line);
    this.size += line.length;
    if (this.size >= MAX_BYTES || !isRoutine(line)) this.flush();
    else if (this.timer === undefined) this.timer = setTimeout(this.flush, MAX_DELAY_MS).unref();
    return true;
  }

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
        // A non-blocking pipe that is full: wait for the reader, as pino's own destination does.
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return;
        sleep(1);
      }
    }
  };
}
