import cluster from 'node:cluster';
import { loadConfig } from './config/config.js';
import { roleOf } from './process/protocol.js';
import { serve } from './process/serving.js';
import { tell } from './process/signals.js';
import { supervise } from './process/supervisor.js';

/**
 * The process: reads the configuration, then supervises the workers (process/supervisor.ts: the process
 * `plant-store serve` runs as, for as long as the service runs, across reloads), or, in a worker it
 * forked, serves (process/serving.ts: every service it runs, in the order they start and the reverse
 * order they stop). A start that fails says why on stderr, in one line, and exits 1.
 */
async function main(): Promise<void> {
  // A terminal hanging up signals its whole group: the supervisor decides what that means for the workers.
  if (cluster.isWorker) process.on('SIGHUP', () => undefined);
  const config = loadConfig();
  if (cluster.isWorker) await serve(config, roleOf(process.env));
  else await supervise(config);
}

/** One line on stderr (a bad setting is named by its message), and for a worker the same to its supervisor, whose log says why; exit 1. */
function cannotStart(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`plant-store: cannot start: ${message}\n`);
  process.exitCode = 1;
  if (!cluster.isWorker) process.exit(1);
  tell({ plantStore: 'failed', message }, () => process.exit(1));
  // Should the channel be gone, exit all the same.
  setTimeout(() => process.exit(1), 1000).unref();
}

main().catch(cannotStart);
