import cluster from 'node:cluster';
import type { FastifyBaseLogger } from 'fastify';
import type { Services } from './services.js';

/** The longest a graceful stop waits for requests in flight before exiting anyway (exit code 1). */
const FORCE_EXIT_MS = 10_000;

/**
 * SIGTERM and SIGINT stop every service gracefully (within FORCE_EXIT_MS), then exit 0; a second signal
 * exits at once. `closing` is told first: answers from then on say `Connection: close`.
 */
export function handleSignals(log: FastifyBaseLogger, services: Services, closing: () => void): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      // A worker may be told twice (its own SIGTERM and the primary's); the primary decides "now".
      if (cluster.isWorker) return;
      // An operator pressing Ctrl-C twice means "now".
      log.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    stopping = true;
    closing();
    log.info({ signal }, 'shutting down: finishing requests in flight');
    const force = setTimeout(() => {
      log.error(`requests still in flight after ${FORCE_EXIT_MS / 1000} s; exiting anyway`);
      process.exit(1);
    }, FORCE_EXIT_MS);
    force.unref();
    // The spans of the last requests and deliveries are exported before exiting (bounded: tracing/sdk.ts).
    void services
      .stopAll((name, error) => log.error({ err: error }, `error while shutting down: ${name}`))
      .then((clean) => {
        if (clean) log.info('stopped');
        process.exit(clean ? 0 : 1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  // Ctrl-C reaches every process of the group; a worker leaves it to the primary, which sends SIGTERM.
  process.on('SIGINT', () => (cluster.isWorker ? undefined : stop('SIGINT')));
}
