import { isatty } from 'node:tty';
import { Lifecycle, type Service } from '../app/services.js';
import { misspeltSettings, type Config } from '../config/config.js';
import { metricsListener } from './listeners.js';
import { processLogger, stderrLine } from './log.js';
import { reloadRefusal } from './release.js';
import { rootWarning } from './root.js';
import { StartFailed } from './worker.js';
import { Workers } from './workers.js';

/**
 * The process `plant-store serve` runs as (systemd's main PID, which stays the same for as long as the
 * service runs): it serves nothing itself and runs none of the service's code, but holds the listening
 * socket its workers share (process/workers.ts), so that it stays open while they come and go. Its
 * services, in the order they start: the metrics listener (METRICS_PORT: every worker's metrics, summed),
 * then the workers. Signals:
 * - SIGTERM: every worker drains (`/readyz` 503 for SHUTDOWN_DRAIN_MS), then stops; exit 0 when all stopped cleanly.
 * - SIGINT (Ctrl-C): every worker stops at once, without the drain.
 * - SIGHUP: a reload, the workers replaced one by one by workers running the code installed now; when a
 *   terminal is attached, SIGHUP is that terminal hanging up, and stops the service as SIGINT does.
 * - a second SIGTERM or SIGINT: the workers are killed, exit 1.
 */
export async function supervise(config: Config): Promise<void> {
  const log = await processLogger(config);
  const asRoot = rootWarning(process.geteuid?.());
  if (asRoot) log.warn(asRoot);
  for (const typo of misspeltSettings()) log.warn(typo);
  const lifecycle = new Lifecycle();
  let started = false;
  let stopping = false;
  const failed = (name: string, error: unknown) =>
    log.error({ err: error }, `error while shutting down: ${name}: ${error instanceof Error ? error.message : String(error)}`);
  const stop = (exitCode: 0 | 1) => {
    stopping = true;
    // Stopped during the start: the workers starting are stopped too, though their start has not ended.
    const early = started
      ? []
      : [
          workers.stop().then(
            () => true,
            (error: unknown) => (failed(workers.name, error), false),
          ),
        ];
    void Promise.all([...early, lifecycle.stop(failed)]).then((outcomes) => process.exit(outcomes.every(Boolean) ? exitCode : 1));
  };
  const workers = new Workers(config, log, (reason) => {
    if (stopping) return;
    log.error(reason);
    stderrLine(`${reason}; stopping`);
    stop(1);
  });

  const onSignal = (signal: NodeJS.Signals, how: 'SIGTERM' | 'SIGINT', message: string) => {
    if (stopping) {
      // Asked twice: now.
      log.warn({ signal }, 'second signal: killing the workers');
      stderrLine(`second ${signal}: killing the workers`);
      workers.kill();
      process.exit(1);
    }
    log.info({ signal }, message);
    workers.stopWith(how);
    stop(0);
  };
  // Installed before any worker is forked: a stop during the start stops the workers starting.
  process.on('SIGTERM', () => onSignal('SIGTERM', 'SIGTERM', 'stopping: the workers drain, then stop'));
  process.on('SIGINT', () => onSignal('SIGINT', 'SIGINT', 'stopping: the workers stop at once'));
  const terminal = [0, 1, 2].some((fd) => isatty(fd));
  process.on('SIGHUP', () => {
    if (!terminal) {
      const refused = reloadRefusal();
      if (refused === undefined) return workers.reload();
      log.error(refused);
      return stderrLine(refused);
    }
    // The terminal closed: the service goes with it, as any program run from a terminal does.
    if (!stopping) onSignal('SIGHUP', 'SIGINT', 'the terminal hung up: stopping, the workers at once');
  });

  const services: Service[] = [
    // 1. The metrics listener (METRICS_PORT): a scrape asks every worker, and answers their sum.
    ...(config.metricsPort !== undefined
      ? [
          metricsListener(
            config,
            (await import('../metrics/cluster.js')).summed(() => workers.metrics()),
            log,
          ),
        ]
      : []),
    // 2. The workers, last, and so stopped first.
    workers,
  ];
  try {
    await lifecycle.start(...services);
    started = true;
  } catch (error) {
    if (stopping) return;
    stopping = true;
    await lifecycle.stop((name, failure) => log.error({ err: failure }, `error while shutting down: ${name}`));
    // A worker that could not start said why on stderr itself.
    if (!(error instanceof StartFailed && error.said)) stderrLine(`cannot start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
