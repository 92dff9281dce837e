import type { FastifyInstance } from 'fastify';

/**
 * Everything that starts and stops, of every kind of process, is a Service, and one runner, Lifecycle,
 * starts a list of them in its order and stops them in the reverse order, so that nothing stops before
 * what still uses it. Each kind of process reads from one list: the supervisor's (process/supervisor.ts:
 * the metrics listener, the workers), a serving process's (process/serving.ts: tracing, the store, the
 * app, the metrics watchers, webhook deliveries, the sweeps, backups, the HTTP listener), and each app's
 * own (app.ts: the request deadlines' timer, load shedding, the JWT keys' refresh, the change feed), which
 * tests, the CLI's OpenAPI export and the benchmarks need as much as the server does, and which the app
 * therefore runs itself: started when it is ready, stopped as it closes (runWithApp).
 *
 * A stop has phases, for the services that need them: `drain` first (the HTTP listener: a load balancer
 * is told to take the instance out while it still serves), then the services marked `stopsFirst` (what
 * holds requests open: the event streams, ended before the requests in flight are waited for), then the
 * rest, each in the reverse order of the list.
 */
export interface Service {
  /** What the log calls it, should it fail. */
  readonly name: string;
  /** Started in the list's order; a service that is running once made (the store, opened) has none. */
  start?(): void | Promise<void>;
  /**
   * A graceful stop's first phase, for every service at once, before any stops: still serving, on the way
   * out. `hurry` aborts when the drain must end sooner (asked to stop again meanwhile).
   */
  drain?(reason: DrainReason, hurry: AbortSignal): void | Promise<void>;
  /**
   * Stopped in the reverse order; a service with nothing to stop (a start-only step) has none. `deadline`
   * (Date.now() time), when the stop has one: past it the process exits anyway, so a service that would wait
   * on something outside (a collector) waits no longer than that.
   */
  stop?(deadline?: number): void | Promise<void>;
  /** Stopped in a phase before the others, whatever its place in the list. */
  readonly stopsFirst?: boolean;
}

/**
 * Why a process drains: it is `leaving` (SIGTERM: a load balancer must take it out first), or it is handing
 * over to a new process on the same listening socket (`handover`, a reload), which already takes connections.
 */
export type DrainReason = 'leaving' | 'handover';

/** Which services a stop reaches: those marked stopsFirst, the others, or all (the first ones first). */
type Phase = 'first' | 'rest' | 'all';

export class Lifecycle {
  private readonly running: Service[] = [];

  /** Starts each service in order, keeping those started to be stopped; a failure stops nothing by itself (the caller decides). */
  async start(...services: readonly Service[]): Promise<void> {
    for (const service of services) {
      await service.start?.();
      this.running.push(service);
    }
  }

  /** Every running service's drain, together; resolves once all are done (a failing one is reported and the others go on). */
  async drain(reason: DrainReason, onError: (name: string, error: unknown) => void, hurry = new AbortController().signal): Promise<boolean> {
    const outcomes = await Promise.allSettled(this.running.map(async (service) => service.drain?.(reason, hurry)));
    let clean = true;
    outcomes.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') return;
      clean = false;
      onError(this.running[i]!.name, outcome.reason);
    });
    return clean;
  }

  /**
   * Stops the running services of `phase`, the last started first, each once the one before it has stopped.
   * One that fails to stop is reported to `onError` and the others still stop. Resolves true when every one stopped.
   * `deadline`: the stop's limit, told to each service (Service.stop).
   */
  async stop(onError: (name: string, error: unknown) => void, phase: Phase = 'all', deadline?: number): Promise<boolean> {
    if (phase === 'all') return (await this.stop(onError, 'first', deadline)) && (await this.stop(onError, 'rest', deadline));
    const first = phase === 'first';
    const leaving = this.running.filter((service) => (service.stopsFirst === true) === first).reverse();
    for (const service of leaving) this.running.splice(this.running.indexOf(service), 1);
    let clean = true;
    for (const service of leaving) {
      try {
        await service.stop?.(deadline);
      } catch (error) {
        clean = false;
        onError(service.name, error);
      }
    }
    return clean;
  }
}

/**
 * An app's own services: started in order when it is ready, those marked stopsFirst stopped as it begins to
 * close (before Fastify waits for the requests in flight, which they hold open), the others once it has closed.
 * A service that fails to stop fails the app's close. Answers what stops the first ones sooner (a reload's
 * old worker ends its event streams as it hands over, long before it closes).
 */
export function runWithApp(app: FastifyInstance, services: readonly Service[]): { stopFirst(): Promise<void> } {
  const lifecycle = new Lifecycle();
  const failed: unknown[] = [];
  const stop = async (phase: 'first' | 'rest') => {
    await lifecycle.stop(
      (name, error) => failed.push(new Error(`${name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error })),
      phase,
    );
    if (phase === 'rest' && failed.length > 0) throw failed.length === 1 ? failed[0] : new AggregateError(failed, 'app services failed to stop');
  };
  app.addHook('onReady', () => lifecycle.start(...services));
  app.addHook('preClose', () => stop('first'));
  app.addHook('onClose', () => stop('rest'));
  return { stopFirst: () => stop('first') };
}
