import { runClosedLoop, type LoadOptions, type LoadResult } from './load-loops.js';
import { runPaced } from './load-paced.js';

export type { AlongsideResult, LoadOptions, LoadResult } from './load-loops.js';

/**
 * The load generator, run as its own process (pinned to its own CPU by the runner): keep-alive raw
 * sockets, one request in flight per connection, pre-built requests. It prints one JSON line: the
 * result of the measured window (after a warm-up), including its own CPU use, so a saturated client
 * shows. The parts: the connections (load-pool.ts), the closed loop and the window (load-loops.ts), the
 * open loop (load-paced.ts). A scenario's `alongside` connections run in a process of their own
 * (load-beside.ts), which the runner starts beside this one.
 */

export function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (options.alongside !== undefined) throw new Error('load: `alongside` runs in bench/load-beside.js, a process of its own');
  return options.rate === undefined ? runClosedLoop(options) : runPaced(options, options.rate);
}

// Run as a process: the options as one JSON argument, the result as one JSON line on stdout.
if (process.argv[1]?.endsWith('/bench/load.js')) {
  const options = JSON.parse(process.argv[2] ?? '{}') as LoadOptions;
  runLoad(options).then(
    (result) => {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`load: ${String(error)}\n`);
      process.exit(1);
    },
  );
}
