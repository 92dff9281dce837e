import type { FastifyBaseLogger } from 'fastify';
import type { App } from '../app.js';
import type { Config } from '../config/config.js';
import { listenForScrapes, type Scrape } from '../metrics/server.js';
import type { Service } from './services.js';

/** The process's listeners: the API's, and the metrics' (a listener of its own, METRICS_PORT). */

/**
 * The HTTP listener as a service. Its stop finishes the requests in flight: close() ends the connections
 * idle at that moment, but a keep-alive connection whose request was in flight turns idle only after its
 * answer, and would hold close() open until its keep-alive timeout, so those are swept as they turn idle.
 * Closing the app also ends the event streams first (app/services.ts), so that they do not hold it open.
 * `closing`: from a stop signal on, answers tell clients to close their keep-alive connections, so they
 * send no next request into a connection about to end.
 */
export function httpListener(app: App, config: Config): Service & { closing(): void } {
  return {
    name: 'http listener',
    closing: () => app.closing(),
    async start() {
      await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
        const code = (error as NodeJS.ErrnoException).code ?? String(error);
        throw new Error(`HOST/PORT: cannot listen on ${config.host}:${config.port} (${code})`, { cause: error });
      });
    },
    async stop() {
      app.closing();
      const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
      sweep.unref();
      try {
        await app.close();
      } finally {
        clearInterval(sweep);
      }
    },
  };
}

/** Where a listener's news goes: the log of a serving process, stderr for the primary of several workers. */
export interface ListenerLog {
  listening(url: string): void;
  failed(error: unknown): void;
}

/** The log of a serving process as a ListenerLog. */
export function logOf(log: Pick<FastifyBaseLogger, 'info' | 'error'>): ListenerLog {
  return {
    listening: (url) => log.info({ url }, `metrics listening at ${url}`),
    failed: (error) => log.error({ err: error }, 'metrics scrape failed'),
  };
}

/** The metrics listener (METRICS_PORT; `scrape` makes the text it serves), started at once: its address is told. */
export async function metricsListener(config: Config, scrape: Scrape, log: ListenerLog): Promise<Service> {
  const address = { host: config.metricsHost, port: config.metricsPort!, allowedHosts: config.metricsAllowedHosts };
  const scrapes = await listenForScrapes(address, scrape, (error) => log.failed(error));
  log.listening(scrapes.url);
  return { name: 'metrics listener', stop: () => scrapes.close() };
}
