/**
 * What a process runs beside its HTTP listener: webhook deliveries, the sweeps, backups, the metrics
 * listener, and the store and tracing beneath them. Each is started in turn and stopped in the reverse
 * order, so that nothing stops before what still uses it: the listener stops first (no new work),
 * deliveries before the store they read, the store before tracing exports its last spans. The list is
 * process/serving.ts (and process/primary.ts for the primary of several workers): a new background job
 * is one more line there.
 */
export interface Service {
  /** What the log calls it, should it fail to stop. */
  readonly name: string;
  /** Started when the service is added; a service already running (the store, once opened) has none. */
  start?(): void | Promise<void>;
  stop(): void | Promise<void>;
}

export class Services {
  private readonly running: Service[] = [];

  /** Starts `service` and keeps it, to be stopped by stopAll. */
  async start(service: Service): Promise<void> {
    await service.start?.();
    this.running.push(service);
  }

  /**
   * Stops every service started, the last started first, each once the one before it has stopped. One that
   * fails to stop is reported to `onError` and the others still stop. Resolves true when every one stopped.
   */
  async stopAll(onError: (name: string, error: unknown) => void): Promise<boolean> {
    let clean = true;
    for (const service of this.running.splice(0).reverse()) {
      try {
        await service.stop();
      } catch (error) {
        clean = false;
        onError(service.name, error);
      }
    }
    return clean;
  }
}
