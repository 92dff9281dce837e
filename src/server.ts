import cluster from 'node:cluster';
import { servingFlags, startingFlags, supervisorFlags } from './process/v8-flags.js';
import type { WorkerMessage } from './process/protocol.js';

/**
 * The process: reads the configuration, then supervises the workers (process/supervisor.ts: the process
 * `plant-store serve` runs as, for as long as the service runs, across reloads), or, in a worker it
 * forked, serves (process/serving.ts: every service it runs, in the order they start and the reverse
 * order they stop). A start that fails says why on stderr, in one line, and exits 1.
 *
 * Everything is loaded here, by dynamic import, and not above: the supervisor then loads none of the
 * serving code (it is smaller, and a reload leaves nothing of the old release in it), and a worker of a
 * release that fails even to load still tells its supervisor why, whose log says it.
 */
async function main(): Promise<void> {
  // A terminal hanging up signals its whole group: the supervisor decides what that means for the workers.
  if (cluster.isWorker) process.on('SIGHUP', () => undefined);
  // Its V8 settings, before anything is loaded (process/v8-flags.ts says why).
  if (cluster.isWorker) startingFlags();
  else supervisorFlags();
  const config = (await import('./config/config.js')).loadConfig();
  if (!cluster.isWorker) return (await import('./process/supervisor.js')).supervise(config);
  const [{ serve }, { roleOf }] = await Promise.all([import('./process/serving.js'), import('./process/protocol.js')]);
  await serve(config, roleOf(process.env));
  servingFlags();
}

/** One line on stderr (a bad setting is named by its message), and for a worker the same to its supervisor, whose log says why; exit 1. */
function cannotStart(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`plant-store: cannot start: ${message}\n`);
  process.exitCode = 1;
  if (!cluster.isWorker || !process.send) process.exit(1);
  const failed: WorkerMessage = { plantStore: 'failed', message };
  process.send(failed, undefined, undefined, () => process.exit(1));
  // Should the channel be gone, exit all the same.
  setTimeout(() => process.exit(1), 1000).unref();
}

main().catch(cannotStart);
