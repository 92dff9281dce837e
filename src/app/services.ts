import type { FastifyInstance } from 'fastify';

/**
 * What one app keeps running while it serves: timers and connections of its own, started when the app
 * is ready and stopped when it closes, by the app and not by the process, because tests, the CLI's
 * OpenAPI export and the benchmarks build apps of their own (buildApp) that need them as much as the
 * server's does, and every app has its own: the request deadlines' timer, the load-shedding monitor,
 * the JWT keys' refresh, the change feed's reader. What the process runs beside its app (webhook
 * deliveries, sweeps, backups, listeners) is in the process's one list (process/serving.ts).
 */
export interface AppService {
  readonly name: string;
  start(): void;
  stop(): void | Promise<void>;
  /**
   * Stopped as the app begins to close (preClose), before it waits for the requests in flight: for what
   * holds requests open (the event streams); the others stop once they have ended (onClose).
   */
  early?: boolean;
}

/** Starts every service, in this order, when the app is ready; stops them in the reverse order when it closes. */
export function runWithApp(app: FastifyInstance, services: readonly AppService[]): void {
  app.addHook('onReady', (done) => {
    for (const service of services) service.start();
    done();
  });
  const stop = async (early: boolean) => {
    for (const service of [...services].reverse()) if ((service.early === true) === early) await service.stop();
  };
  app.addHook('preClose', () => stop(true));
  app.addHook('onClose', () => stop(false));
}
