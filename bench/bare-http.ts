import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/**
 * What the bare servers the service is measured against (baseline.ts and the prototypes) do alike: the
 * bearer check against a constant, JSON answers with a content-type and length and nothing else, a POST's
 * body read, JSON.parse'd and its fields' types checked, loopback on PORT. One copy, so that they stay the
 * same least work and differ only in what each stores or reads.
 */

export const EXPECTED_AUTH = `Bearer ${process.env.BENCH_TOKEN ?? 'bench-token'}`;
export const PORT = Number(process.env.PORT ?? 0);

export function answer(res: ServerResponse, status: number, body: string, headers?: Record<string, string>): void {
  const length = Buffer.byteLength(body);
  res.writeHead(
    status,
    headers === undefined
      ? { 'content-type': 'application/json; charset=utf-8', 'content-length': length }
      : { 'content-type': 'application/json; charset=utf-8', 'content-length': length, ...headers },
  );
  res.end(body);
}

export function fail(res: ServerResponse, status: number, message: string): void {
  answer(res, status, JSON.stringify({ error: status, message }));
}

/** A POST's plant once its fields' types are checked. */
export interface CheckedPlant {
  id: number;
  name: string;
  tag: string | undefined;
}

/** Reads a POST /plants body and checks it: a 400 is answered here; a plant that passes goes to `then`. */
export function readNewPlant(req: IncomingMessage, res: ServerResponse, then: (plant: CheckedPlant) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let plant: { id?: unknown; name?: unknown; tag?: unknown };
    try {
      plant = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof plant;
    } catch {
      return fail(res, 400, 'body is not valid JSON');
    }
    const { id, name, tag } = plant;
    if (typeof id !== 'number' || !Number.isInteger(id)) return fail(res, 400, 'body.id must be an integer');
    if (typeof name !== 'string' || name.length === 0 || name.length > 256) return fail(res, 400, 'body.name must be a string');
    if (tag !== undefined && (typeof tag !== 'string' || tag.length > 64)) return fail(res, 400, 'body.tag must be a string');
    then({ id, name, tag });
  });
}

/**
 * Listens on loopback at PORT with long keep-alive, says `<name> listening on <port>` on stdout, and on
 * SIGTERM closes, then runs `close` (a store to close) and exits.
 */
export function listen(server: Server, name: string, close: () => Promise<void> = () => Promise.resolve()): void {
  server.keepAliveTimeout = 60_000;
  server.listen(PORT, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`${name} listening on ${typeof address === 'object' && address ? address.port : PORT}\n`);
  });
  const exit = () =>
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`${name}: closing failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  process.on('SIGTERM', () => server.close(() => void exit()));
}

/** A server of POST /plants alone (and /healthz), as the prototypes that store: each checked plant goes to `store`, which answers it. */
export function servePlantPosts(name: string, store: (plant: CheckedPlant, res: ServerResponse) => void, close?: () => Promise<void>): void {
  const server = createServer((req, res) => {
    if (req.url === '/healthz') return answer(res, 200, '{"status":"ok"}');
    if (req.headers.authorization !== EXPECTED_AUTH) return fail(res, 401, 'missing or unknown bearer token');
    if (req.method === 'POST' && req.url === '/plants') return readNewPlant(req, res, (plant) => store(plant, res));
    fail(res, 404, 'no such resource');
  });
  listen(server, name, close);
}
