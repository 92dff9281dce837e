import type { FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import type { App } from '../app.js';
import type { DrainReason, Lifecycle } from '../app/services.js';
import type { Config } from '../config/config.js';
import { isOurs, metricsAnswer, type SupervisorMessage, type WorkerMessage } from './protocol.js';

/** How a serving process stops: after a drain (`leaving` on SIGTERM, `handover` in a reload), or at once (`now`, SIGINT). */
export type StopKind = DrainReason | 'now';

/** How a stop ended: every service stopped; one failed to (logged); or the limit passed first. */
export type StopOutcome = 'stopped' | 'failed' | 'late';

/**
 * Stops a serving process's services: the drain (every service's at once), then each service in the
 * reverse order of the list, within `timeoutMs` of the drain's end (SHUTDOWN_TIMEOUT_MS). Resolves as soon
 * as they have stopped or the limit has passed, whichever comes first: the caller exits then (0 only
 * when `stopped`), whatever is still running.
 */
export async function stopServing(
  lifecycle: Lifecycle,
  kind: StopKind,
  timeoutMs: number,
  log: Pick<FastifyBaseLogger, 'error'>,
  hurry?: AbortSignal,
): Promise<StopOutcome> {
  const failed = (name: string, error: unknown) => log.error({ err: error }, `error while shutting down: ${name}`);
  const drained = kind === 'now' || (await lifecycle.drain(kind, failed, hurry));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
  // The services are told the limit, less a margin in which what they did by then still ends the stop cleanly.
  const deadline = Date.now() + timeoutMs - Math.min(STOP_MARGIN_MS, Math.ceil(timeoutMs / 10));
  const stopped = lifecycle.stop(failed, 'all', deadline).then((clean): StopOutcome => (clean && drained ? 'stopped' : 'failed'));
  const outcome = await Promise.race([stopped, late]);
  clearTimeout(timer);
  if (outcome === 'late')
    log.error(`still stopping ${timeoutMs / 1000} s after the drain (requests in flight, or a service: see above); exiting anyway`);
  return outcome;
}

/** The most of SHUTDOWN_TIMEOUT_MS kept back from the services' deadline (a tenth when it is short). */
const STOP_MARGIN_MS = 250;

/** The kinds of stop, the least urgent first. */
const URGENCY: readonly StopKind[] = ['handover', 'leaving', 'now'];

/** What a stop request says in the log. */
function announce(kind: StopKind, config: Config): string {
  if (kind === 'leaving') {
    return config.shutdownDrainMs > 0
      ? `shutting down: /readyz answers 503 for ${config.shutdownDrainMs / 1000} s while every other request is served, then the listener closes and the requests in flight finish`
      : 'shutting down: finishing requests in flight';
  }
  if (kind === 'handover') return 'shutting down: a new worker serves in this one’s place (a reload); finishing requests in flight';
  return 'shutting down: finishing requests in flight';
}

/**
 * What a serving process does when its supervisor asks, once it serves: SIGTERM drains and stops, SIGINT
 * (Ctrl-C, which reaches every process of a terminal's group) stops at once, a `handover` message stops
 * once its clients have dropped their connections, while a new worker serves on the same socket (the new
 * one is handed this one's rate-limit counts first); `metrics` is answered with `registry`'s (METRICS_PORT).
 * Once stopping, a further stop
 * request cuts what is left of the drain short (the supervisor decides "now": a second signal to it kills
 * the workers). Exits 0 when every service stopped, 1 otherwise.
 */
export function answerSupervisor(lifecycle: Lifecycle, config: Config, app: App, log: FastifyBaseLogger, registry?: Registry): void {
  let stopping: StopKind | undefined;
  const hurry = new AbortController();
  const stop = (kind: StopKind, details: object) => {
    if (stopping !== undefined) {
      // Told to stop more urgently (Ctrl-C in a drain): what is left of the drain is skipped, and the stop goes
      // on. The same request twice (systemd signals every process of the unit, and the supervisor its workers)
      // changes nothing.
      if (URGENCY.indexOf(kind) <= URGENCY.indexOf(stopping) || hurry.signal.aborted) return;
      if (stopping === 'handover' && kind === 'leaving' && config.shutdownDrainMs > 0) {
        // The service stops (SIGTERM) while this one hands over in a reload: the instance drains, and this
        // worker with it as the new one does (`/readyz` 503), its connections kept for SHUTDOWN_DRAIN_MS at
        // most. Closed at once, a request a client (a balancer not told yet) was sending on one failed.
        stopping = kind;
        app.stopping({ leaving: true });
        log.info(details, `asked to stop: the drain goes on for ${config.shutdownDrainMs / 1000} s at most, /readyz 503`);
        setTimeout(() => hurry.abort(), config.shutdownDrainMs);
        return;
      }
      log.info(details, 'asked to stop sooner: the drain ends now');
      hurry.abort();
      return;
    }
    stopping = kind;
    log.info(details, announce(kind, config));
    void stopServing(lifecycle, kind, config.shutdownTimeoutMs, log, hurry.signal).then((outcome) => {
      if (outcome === 'stopped') log.info('stopped');
      process.exit(outcome === 'stopped' ? 0 : 1);
    });
  };
  process.on('SIGTERM', () => stop('leaving', { signal: 'SIGTERM' }));
  process.on('SIGINT', () => stop('now', { signal: 'SIGINT' }));
  process.on('message', (message: unknown) => {
    if (!isOurs<SupervisorMessage>(message)) return;
    if (message.plantStore === 'metrics') {
      void (registry?.getMetricsAsJSON() ?? Promise.resolve([])).then((metrics) => tell(metricsAnswer(message.request, metrics)));
    } else if (message.plantStore === 'rate-counts') app.rateLimits?.absorb(message.counts);
    else if (message.plantStore === 'forget-token') {
      app.forgetToken(message.tokenId);
      tell({ plantStore: 'token-forgotten', request: message.request });
    } else if (message.plantStore === 'handover' && stopping === undefined) {
      if (app.rateLimits) tell({ plantStore: 'rate-counts', counts: app.rateLimits.counted() });
      stop('handover', { reason: 'reload' });
    }
  });
}

/** A message to the supervisor (nothing when there is none: the process was not forked by one). */
export function tell(message: WorkerMessage, then?: () => void): void {
  if (process.send) process.send(message, undefined, undefined, () => then?.());
  else then?.();
}
