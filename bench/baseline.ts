import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/**
 * The baseline: the least a node:http server does for the same operations, storing nothing. It reads
 * the body, JSON.parse, checks the bearer header against a constant and the field types, and answers
 * the same JSON the service answers. The service's throughput is reported as a share of this one's.
 */

const TOKEN = process.env.BENCH_TOKEN ?? 'bench-token';
const EXPECTED_AUTH = `Bearer ${TOKEN}`;
const PORT = Number(process.env.PORT ?? 0);

function answer(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function fail(res: ServerResponse, status: number, message: string): void {
  answer(res, status, JSON.stringify({ error: status, message }));
}

interface NewPlant {
  id?: unknown;
  name?: unknown;
  tag?: unknown;
}

function create(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let plant: NewPlant;
    try {
      plant = JSON.parse(Buffer.concat(chunks).toString('utf8')) as NewPlant;
    } catch {
      return fail(res, 400, 'body is not valid JSON');
    }
    const { id, name, tag } = plant;
    if (typeof id !== 'number' || !Number.isInteger(id)) return fail(res, 400, 'body.id must be an integer');
    if (typeof name !== 'string' || name.length === 0 || name.length > 256) return fail(res, 400, 'body.name must be a string');
    if (tag !== undefined && (typeof tag !== 'string' || tag.length > 64)) return fail(res, 400, 'body.tag must be a string');
    answer(res, 200, JSON.stringify({ name, tag }));
  });
}

const PLANT = { name: 'Monstera deliciosa', tag: 'tropical' };

function read(res: ServerResponse, idText: string): void {
  const id = Number(idText);
  if (!Number.isSafeInteger(id)) return fail(res, 400, 'params.id must be an integer');
  answer(res, 200, JSON.stringify({ id, ...PLANT }));
}

function list(res: ServerResponse, query: URLSearchParams): void {
  const limit = Number(query.get('limit') ?? 100);
  const after = Number(query.get('after') ?? 0);
  const page = [];
  for (let i = 1; i <= limit; i++) page.push({ id: after + i, ...PLANT });
  answer(res, 200, JSON.stringify(page));
}

const server = createServer((req, res) => {
  if (req.url === '/healthz') return answer(res, 200, '{"status":"ok"}');
  if (req.headers.authorization !== EXPECTED_AUTH) return fail(res, 401, 'missing or unknown bearer token');
  const url = req.url ?? '/';
  if (req.method === 'POST' && url === '/plants') return create(req, res);
  if (req.method === 'GET' && url.startsWith('/plants/')) return read(res, url.slice('/plants/'.length));
  if (req.method === 'GET' && url.startsWith('/plants?')) return list(res, new URLSearchParams(url.slice('/plants?'.length)));
  fail(res, 404, 'no such resource');
});
server.keepAliveTimeout = 60_000;

server.listen(PORT, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`baseline listening on ${typeof address === 'object' && address ? address.port : PORT}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
