import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { answer, EXPECTED_AUTH, fail, listen, readNewPlant } from './bare-http.js';

/**
 * The baseline: the least a node:http server does for the same operations, storing nothing. It reads
 * the body, JSON.parse, checks the bearer header against a constant and the field types, and answers
 * the same JSON the service answers. The service's throughput is reported as a share of this one's.
 */

function create(req: IncomingMessage, res: ServerResponse): void {
  readNewPlant(req, res, ({ name, tag }) => answer(res, 200, JSON.stringify({ name, tag })));
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
listen(server, 'baseline');
