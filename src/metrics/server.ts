import { createServer, type ServerResponse } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import { statusOf, type ErrorCode } from '../http/error-codes.js';

/**
 * The metrics listener: a plain node:http server on METRICS_HOST:METRICS_PORT, apart from the API's port, so
 * that metrics never pass through the API's authentication, rate limits or load shedding, and the API never
 * serves them. It answers `GET /metrics` (and HEAD) only; anything else gets the API's Error shape. It has
 * no authentication: it is meant for a private network (the default host is loopback); it checks the Host
 * header, so that a browser page of another site cannot read it through DNS rebinding.
 */

/** What one scrape answers: the body in the Prometheus text format and its media type. */
export type Scrape = () => Promise<{ contentType: string; body: string }>;

export interface MetricsListener {
  /** http://host:port/metrics, with the port actually bound (METRICS_PORT=0 picks a free one). */
  readonly url: string;
  close(): Promise<void>;
}

/** Scrapes are small and quick; a client slower than this is cut off. */
const REQUEST_TIMEOUT_MS = 10_000;
/** Connections at most: a few Prometheus servers, not the public. */
const MAX_CONNECTIONS = 64;

function sendError(response: ServerResponse, code: ErrorCode, message: string, headers: Record<string, string> = {}): void {
  const status = statusOf(code);
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', ...headers });
  response.end(JSON.stringify({ error: status, message, code }));
}

/** Where the listener binds (METRICS_HOST, METRICS_PORT) and the names it answers to besides (METRICS_ALLOWED_HOSTS). */
export interface ScrapeAddress {
  host: string;
  port: number;
  allowedHosts: readonly string[];
}

/** A Host header's name: an IPv6 address in brackets, or what comes before the port. */
const HOST_HEADER = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+)(?::\d*)?$/;

/**
 * Which Host headers the listener answers: none is fine (HTTP/1.0); an IP address always (a browser sends
 * one only when its page comes from that address, the listener itself), `localhost`, METRICS_HOST when it
 * is a name, and METRICS_ALLOWED_HOSTS (`*`: any). A page of another site that has rebound its own name to
 * this address (DNS rebinding) sends that name, and may not read the metrics.
 */
function hostCheck(host: string, allowedHosts: readonly string[]): (header: string | undefined) => boolean {
  if (allowedHosts.includes('*')) return () => true;
  const names = new Set(['localhost', ...allowedHosts.map((name) => name.toLowerCase())]);
  if (isIP(host) === 0) names.add(host.toLowerCase());
  return (header) => {
    if (header === undefined) return true;
    const name = HOST_HEADER.exec(header)?.[1];
    if (name === undefined) return false;
    return isIP(name.startsWith('[') ? name.slice(1, -1) : name) !== 0 || names.has(name.toLowerCase());
  };
}

/** Starts the listener; `onError` is told of a scrape that failed (answered 500). */
export async function listenForScrapes(
  { host, port, allowedHosts }: ScrapeAddress,
  scrape: Scrape,
  onError: (error: unknown) => void,
): Promise<MetricsListener> {
  const answersTo = hostCheck(host, allowedHosts);
  const server = createServer({ requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: REQUEST_TIMEOUT_MS }, (request, response) => {
    if (!answersTo(request.headers.host)) {
      // 421 Misdirected Request: this server does not answer for the authority the request names.
      const shown = JSON.stringify(String(request.headers.host).slice(0, 200));
      return sendError(
        response,
        'misdirected_request',
        `the Host header names ${shown}, which this metrics listener does not answer to (METRICS_ALLOWED_HOSTS)`,
      );
    }
    const path = (request.url ?? '/').split('?', 1)[0]!;
    if (path !== '/metrics')
      return sendError(response, 'route_not_found', `no such resource: ${request.method} ${path.slice(0, 200)}; metrics are at GET /metrics`);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return sendError(response, 'method_not_allowed', `method ${request.method} is not allowed on /metrics; allowed: GET, HEAD`, {
        allow: 'GET, HEAD',
      });
    }
    scrape().then(
      ({ contentType, body }) => {
        response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
        response.end(body);
      },
      (error: unknown) => {
        onError(error);
        sendError(response, 'internal_error', `could not collect the metrics: ${error instanceof Error ? error.message : String(error)}`);
      },
    );
  });
  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new Error(`METRICS_HOST/METRICS_PORT: cannot listen on ${host}:${port} (${code})`, { cause: error });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        // Prometheus keeps its connection open between scrapes: end it, or close() would wait for it.
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
