import { createServer } from 'node:http';

/**
 * The collector of the tracing scenarios: an OTLP/HTTP endpoint on loopback that takes every export and
 * answers 200 at once, in the runner's process (idle while the load runs, and kept off the servers' CPU),
 * as a collector on another machine would. It counts what arrives, so a run shows the spans were sent.
 */

export interface OtlpSink {
  /** The base URL (OTEL_EXPORTER_OTLP_ENDPOINT). */
  endpoint: string;
  /** Exports and bytes received since the last call. */
  take(): { exports: number; bytes: number };
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let exports = 0;
  let bytes = 0;
  const server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (bytes += chunk.length));
    request.on('end', () => {
      exports++;
      response.writeHead(200, { 'content-type': String(request.headers['content-type'] ?? 'application/x-protobuf') }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    take() {
      const taken = { exports, bytes };
      exports = 0;
      bytes = 0;
      return taken;
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
