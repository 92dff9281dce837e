import { Writable } from 'node:stream';

/** Collects what a logger (logging/logger.ts createLogger) writes, for tests that read the log lines. */
export class LogSink extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.text += chunk.toString('utf8');
    callback();
  }
  lines(): Array<Record<string, unknown>> {
    return this.text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}
