/**
 * Blocks this thread for `ms` milliseconds, for the few waits that must stay synchronous: a retry inside a
 * synchronous open (store/sqlite/open-file.ts), the log's writer waiting for a full pipe's reader
 * (logging/destination.ts). Never on a request's path.
 */
export function pauseThread(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
