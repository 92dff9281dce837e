import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { runAlongside, type LoadOptions } from './load-loops.js';

/**
 * The connections beside a measured load (a scenario's `alongside`: the POSTs under which paced GETs are
 * measured), as a load generator process of their own, on the same CPU. In the measured load's process, the
 * GETs' sends and answers waited for the turns of its event loop that handled the POSTs' answers, which
 * added the client's own queueing to the GETs' latency with POSTs beside and not to it alone. Runs until the
 * measured window comes on stdin (one JSON line, [start, end] on the monotonic clock shared by every
 * process), then prints what was answered in it as one JSON line.
 */

if (process.argv[1]?.endsWith('/bench/load-beside.js')) {
  const options = JSON.parse(process.argv[2] ?? '{}') as LoadOptions;
  if (options.alongside === undefined) throw new Error('load-beside: no `alongside` in the options');
  const started = performance.now();
  const beside = runAlongside(options, options.alongside);
  const lines = createInterface({ input: process.stdin });
  lines.once('line', (line) => {
    const window = JSON.parse(line) as [number, number];
    // Its CPU over its whole run, which is one load from start to end: so that a saturated client core shows.
    const { user, system } = process.cpuUsage();
    const clientCpu = (user + system) / 1000 / (performance.now() - started);
    process.stdout.write(`${JSON.stringify({ ...beside.finish(window), clientCpu })}\n`);
    process.exit(0);
  });
}
