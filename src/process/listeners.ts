import { Server as NetServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { App } from '../app.js';
import type { Service } from '../app/services.js';
import type { Config } from '../config/config.js';
import type { Scrape } from '../metrics/server.js';

/** The process's listeners: the API's, and the metrics' (a listener of its own, METRICS_PORT). */

/**
 * After the drain, between closing the listener and closing the connections left idle: a connection
 * accepted a moment before the listener closed has not sent its first request yet, and would be closed
 * under it.
 */
const FIRST_REQUEST_GRACE_MS = 500;

/**
 * How long a worker handing over (a reload) waits for its connections to end: its idle ones are gone a
 * second past KEEP_ALIVE_TIMEOUT_MS (Node closes them then); what is left has a request in flight (a bulk
 * import arriving, an export being read), each closing after its answer, waited for up to IMPORT_TIMEOUT_MS
 * more, the longest a request's arrival may take. The supervisor waits as long, and the stop's
 * SHUTDOWN_TIMEOUT_MS, before it kills the worker (process/workers.ts).
 */
export function handoverWaitMs(config: Pick<Config, 'keepAliveTimeoutMs' | 'importTimeoutMs'>): number {
  return config.keepAliveTimeoutMs + 1000 + config.importTimeoutMs;
}

/** Resolves once `server` has no connection left, after `limitMs`, or when `hurry` aborts. */
async function connectionsGone(server: NetServer, limitMs: number, hurry: AbortSignal): Promise<void> {
  const count = () => new Promise<number>((resolve) => server.getConnections((_error, n) => resolve(n ?? 0)));
  for (const deadline = Date.now() + limitMs; Date.now() < deadline && !hurry.aborted && (await count()) > 0;) await pause(100, hurry);
}

/** Waits `ms`, or less when `hurry` aborts. */
async function pause(ms: number, hurry: AbortSignal): Promise<void> {
  await sleep(ms, undefined, { signal: hurry }).catch(() => undefined);
}

/**
 * The HTTP listener as a service, with the drain a load balancer can follow:
 * - drain, `leaving` (SIGTERM): `/readyz` answers 503 and every answer says Connection: close, for
 *   SHUTDOWN_DRAIN_MS, while everything is still served and new connections still taken: a balancer
 *   checking `/readyz` takes the instance out, and clients' keep-alive connections end after an answer.
 *   Then no new connection is taken (the socket itself stays open as long as another worker listens on it).
 * - drain, `handover` (a reload, whose new worker already takes connections on the same socket): no new
 *   connection from the start, every answer saying Connection: close, the event streams ended (their
 *   clients reconnect, to the new worker), `/readyz` still 200 (it speaks for the socket, which stays
 *   ready). Then it waits for its connections to end by themselves: each busy one after its next answer,
 *   each idle one when its client drops it, which a client does before the keep-alive timeout the server
 *   announced (`Keep-Alive: timeout=`, KEEP_ALIVE_TIMEOUT_MS), when Node closes it anyway. No connection is
 *   closed by this side while a client may be sending on it: closing an idle connection races the
 *   client's next request (it fails, reset), which a reload must never make fail. A request in flight
 *   (a long import, an export) is waited for within its own limit, IMPORT_TIMEOUT_MS (`handoverWaitMs`).
 * - stop: the connections idle now close, those with a request in flight after its answer (which says
 *   so); event streams end cleanly (the app closing ends them, app.ts), so that their clients resume
 *   elsewhere; then the app's timers stop. Connections that turn idle are swept as they do: close() ends
 *   only those idle when it is called, and a keep-alive connection whose answer is being written would
 *   otherwise hold the stop open until its keep-alive timeout.
 */
export function httpListener(made: { readonly app: App }, config: Config): Service {
  // Closes the listening handle only: http.Server's close() would also close, at once, the connections
  // idle at this moment, among them those accepted a moment ago whose first request is on its way.
  const stopAccepting = () => {
    if (made.app.server.listening) NetServer.prototype.close.call(made.app.server);
  };
  return {
    name: 'http listener',
    async start() {
      await made.app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
        const code = (error as NodeJS.ErrnoException).code ?? String(error);
        throw new Error(`HOST/PORT: cannot listen on ${config.host}:${config.port} (${code})`, { cause: error });
      });
    },
    async drain(reason, hurry) {
      made.app.stopping({ leaving: reason === 'leaving' });
      if (reason === 'handover') {
        stopAccepting();
        await made.app.endStreams();
        await connectionsGone(made.app.server, handoverWaitMs(config), hurry);
      } else if (config.shutdownDrainMs > 0) {
        await pause(config.shutdownDrainMs, hurry);
        stopAccepting();
        await pause(FIRST_REQUEST_GRACE_MS, hurry);
      }
    },
    async stop() {
      const { app } = made;
      app.stopping({ leaving: false });
      // Before the streams end, so that their clients reconnect to another process, not to this one.
      stopAccepting();
      app.server.closeIdleConnections();
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

/**
 * The metrics listener (METRICS_PORT), the supervisor's: `scrape` makes the text it serves (every worker's
 * metrics, summed: metrics/cluster.ts). Its address is logged once it listens. Its server (node:http) is
 * loaded as it starts: a supervisor without METRICS_PORT never loads it.
 */
export function metricsListener(config: Config, scrape: Scrape, log: Pick<FastifyBaseLogger, 'info' | 'error'>): Service {
  let scrapes: Awaited<ReturnType<typeof import('../metrics/server.js').listenForScrapes>> | undefined;
  return {
    name: 'metrics listener',
    async start() {
      const { listenForScrapes } = await import('../metrics/server.js');
      const address = { host: config.metricsHost, port: config.metricsPort!, allowedHosts: config.metricsAllowedHosts };
      scrapes = await listenForScrapes(address, scrape, (error) => log.error({ err: error }, 'metrics scrape failed'));
      log.info({ url: scrapes.url }, `metrics listening at ${scrapes.url}`);
    },
    stop: () => scrapes?.close(),
  };
}
