import { int, type Setting } from './setting.js';

/**
 * How the process stops and reloads (src/process/, docs/production.md "Signals"): the drain a load balancer
 * follows on SIGTERM, the limit of a graceful stop, the wait for a reload's new worker.
 */

export const PROCESS_SETTINGS = {
  shutdownDrainMs: {
    env: 'SHUTDOWN_DRAIN_MS',
    schema: int(
      0,
      600_000,
      10_000,
      'On SIGTERM, how long `/readyz` answers 503 while everything else is still served, before the listener closes: time for a load balancer to take the instance out (10 s: three failed checks 2 s apart, a check in flight and a margin); 0: none. SIGINT never waits',
    ),
  },
  shutdownTimeoutMs: {
    env: 'SHUTDOWN_TIMEOUT_MS',
    schema: int(
      100,
      3_600_000,
      10_000,
      'After the drain, the longest a graceful stop waits for requests in flight and the services to stop; past it the process exits at once with code 1',
    ),
  },
  reloadTimeoutMs: {
    env: 'RELOAD_TIMEOUT_MS',
    schema: int(
      1000,
      3_600_000,
      60_000,
      'On SIGHUP, the longest a new worker may take to be ready (its migrations included); past it the reload is given up and the old worker keeps serving',
    ),
  },
} satisfies Record<string, Setting>;
