import { openSync } from 'node:fs';
import { pino } from 'pino';
import { BatchedDestination } from '../src/logging/destination.js';
import { createLogger } from '../src/logging/logger.js';

/**
 * node dist/bench/log-lines.js: what one access line costs, by destination, written to /dev/null on this
 * CPU. Why the service keeps its own batched destination (src/logging/destination.ts) instead of
 * pino.destination with minLength: see the figures this prints (and bench/RESULTS.md).
 */

const N = 500_000;
const line = { reqId: 'k3x9a1-2f', method: 'GET', url: '/plants/123456?limit=5', status: 200, ms: 0.12 };

function measure(name: string, destination: { write(line: string): unknown }): void {
  const access = createLogger('info', destination).child({}, { redact: [] });
  for (let i = 0; i < N / 10; i++) access.info(line, 'request');
  const started = process.hrtime.bigint();
  for (let i = 0; i < N; i++) access.info(line, 'request');
  const ns = Number(process.hrtime.bigint() - started) / N;
  process.stdout.write(`${name.padEnd(52)} ${(ns / 1000).toFixed(2)} µs/line\n`);
}

const fd = openSync('/dev/null', 'w');
for (let round = 1; round <= 2; round++) {
  process.stdout.write(`round ${round}\n`);
  measure('BatchedDestination (the service)', new BatchedDestination(fd));
  measure('pino.destination sync, one write per line', pino.destination({ fd, sync: true }));
  measure('pino.destination sync, minLength 4 KiB', pino.destination({ fd, sync: true, minLength: 4096, maxWrite: 8192 }));
  measure('pino.destination sync, minLength 16 KiB', pino.destination({ fd, sync: true, minLength: 16384, maxWrite: 65536 }));
  measure('pino.destination async, minLength 16 KiB', pino.destination({ fd, sync: false, minLength: 16384, maxWrite: 65536 }));
}
process.exit(0);
