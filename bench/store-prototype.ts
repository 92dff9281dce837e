import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { openStore } from '../src/store/open.js';

/**
 * The store prototype: node:http in front of the service's own store (openStore: its migrations, its group
 * commit, its writer thread on SQLite, the same event, version and index writes), and nothing else. It
 * reads the body, JSON.parse, checks the bearer header and the field types as the durable prototype does,
 * and answers each POST /plants when the store has its put (create or replace, as the service's POST
 * without conditions). No framework, no validation schema, no headers beyond content-type, no log line,
 * no idempotency, no webhooks. So the service's share of it is what Fastify and the HTTP features cost
 * over the service's own durable work, and its share of the prototypes is what that durable work and the
 * store's design cost; on PostgreSQL it is the equal-work anchor the shared one (SQLite only) is not.
 * Usage: DATABASE_URL=file:… or postgres://… node dist/bench/store-prototype.js
 */

const TOKEN = process.env.BENCH_TOKEN ?? 'bench-token';
const EXPECTED_AUTH = `Bearer ${TOKEN}`;
const PORT = Number(process.env.PORT ?? 0);

// The service's defaults (src/config/store.ts).
const store = await openStore({
  databaseUrl: process.env.DATABASE_URL ?? '',
  sqliteSynchronous: 'FULL',
  dbTimeoutMs: 5000,
  pgPoolSize: 10,
  pgReadPoolSize: 3,
  writeQueueLimit: 10_000,
});

function answer(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const fail = (res: ServerResponse, status: number, message: string) => answer(res, status, JSON.stringify({ error: status, message }));

function create(req: IncomingMessage, res: ServerResponse): void {
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
    store.plants.put(tag === undefined ? { id, name } : { id, name, tag }).then(
      (result) =>
        result.outcome === 'created' || result.outcome === 'replaced'
          ? answer(res, 200, JSON.stringify({ name, tag }))
          : fail(res, 409, `not stored: ${result.outcome}`),
      (error: unknown) => {
        process.stderr.write(`store prototype: put failed: ${String(error)}\n`);
        fail(res, 503, 'the store is unavailable');
      },
    );
  });
}

const server = createServer((req, res) => {
  if (req.url === '/healthz') return answer(res, 200, '{"status":"ok"}');
  if (req.headers.authorization !== EXPECTED_AUTH) return fail(res, 401, 'missing or unknown bearer token');
  if (req.method === 'POST' && req.url === '/plants') return create(req, res);
  fail(res, 404, 'no such resource');
});
server.keepAliveTimeout = 60_000;
server.listen(PORT, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`store prototype listening on ${typeof address === 'object' && address ? address.port : PORT}\n`);
});
process.on('SIGTERM', () => server.close(() => void store.close().then(() => process.exit(0))));
