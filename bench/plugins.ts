import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import underPressure from '@fastify/under-pressure';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import { connect, type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { TokenVerifier } from '../src/auth/tokens.js';
import { authHook } from '../src/http/auth.js';
import { installErrorHandling, HttpError } from '../src/http/errors.js';
import { Writes } from '../src/http/writes.js';
import { OverloadMonitor } from '../src/http/overload.js';
import { addressKey, limitedAuthentication, MemoryRateLimiter } from '../src/http/rate-limit.js';
import { installSecurity, type RequestCheck } from '../src/http/security.js';
import { validatorCompiler } from '../src/http/validation.js';
import { buildOpenApi } from '../src/openapi/document.js';
import { plantImportRoute } from '../src/plants/import-route.js';
import { plantRoutes } from '../src/plants/routes.js';
import { plantListRoute } from '../src/plants/list-route.js';
import { namedSchemas } from '../src/plants/schema.js';
import type { Store } from '../src/store/store.js';
import { SqliteStore } from '../src/store/sqlite/store.js';
import { systemRoutes } from '../src/system/routes.js';
import { SIGNING, WEBHOOK_EVENTS, webhookSchemas } from '../src/webhooks/events-doc.js';
import { webhookRoutes } from '../src/webhooks/routes.js';
import { webhookDeliveryRoutes } from '../src/webhooks/delivery-routes.js';

/**
 * npm run bench:plugins [-- --rounds=7 --requests=20000 --only=cors,rate-limit,overload,openapi]
 *
 * The four pieces written by hand where a Fastify plugin exists (issue 17, point 9), each measured beside
 * the plugin configured to do the same job, in one process and one run, the variants alternating round
 * after round (the machine is shared and noisy: only same-run figures compare):
 * - CORS (src/http/security.ts) against @fastify/cors: a simple cross-origin GET and a preflight;
 * - rate limits (src/http/rate-limit.ts) against @fastify/rate-limit: an authenticated GET;
 * - overload shedding (src/http/overload.ts) against @fastify/under-pressure: a GET;
 * - the OpenAPI document (src/openapi/document.ts) against @fastify/swagger: building it from the service's routes.
 * Each request figure is CPU µs per request over loopback HTTP (user + system), the median of the rounds,
 * with a bare app ("none") measured in the same rounds so that the piece's own cost is the difference.
 */

const { values: options } = parseArgs({
  options: { rounds: { type: 'string', default: '7' }, requests: { type: 'string', default: '20000' }, only: { type: 'string' } },
});
const PIECES = ['cors', 'rate-limit', 'overload', 'openapi'];
const ONLY = options.only?.split(',') ?? PIECES;
for (const piece of ONLY) if (!PIECES.includes(piece)) throw new Error(`--only takes ${PIECES.join(', ')}, got ${piece}`);
const ROUNDS = Number(options.rounds);
const REQUESTS = Number(options.requests);
if (!(Number.isInteger(ROUNDS) && ROUNDS >= 1 && Number.isInteger(REQUESTS) && REQUESTS >= 100)) {
  throw new Error(`--rounds must be a whole number from 1 and --requests one from 100, got ${options.rounds} and ${options.requests}`);
}

const TOKEN = 'bench-token-0123456789abcdef0123456789';
const ORIGIN = 'https://app.example';
const EXPOSED = ['link', 'location', 'retry-after', 'www-authenticate', 'x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];

/** One request on the wire: method, path, headers, no body. */
interface WireRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
}

function wire({ method, url, headers = {} }: WireRequest): Buffer {
  const lines = [`${method} ${url} HTTP/1.1`, 'host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

const STATUS_LINE = Buffer.from('HTTP/1.1 ');
/** Requests sent at once on the connection (pipelined): the client's own cost per request stays small. */
const BATCH = 32;

/**
 * CPU µs (user + system of this process) per request of `count` requests over a keep-alive loopback
 * connection, pipelined BATCH at a time, after a warm-up. The client in the same process is a few lines
 * that write prepared bytes and count status lines, the same for every variant, so differences between
 * variants are the server's. (Not app.inject: on this Fastify and light-my-request each injected request
 * leaves about 9 KB on the heap, which grows without end over a long loop.)
 */
async function cpuPerRequest(app: FastifyInstance, request: WireRequest, count: number, expect: number): Promise<number> {
  const port = (app.server.address() as AddressInfo).port;
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.setNoDelay(true);
  const one = wire(request);
  let seen = 0;
  let tail = Buffer.alloc(0);
  let first = '';
  let waiting: { until: number; resolve: () => void } | undefined;
  socket.on('data', (chunk: Buffer) => {
    if (first.length < 200) first += chunk.toString('latin1');
    // Status lines, counted across chunk boundaries.
    const text = Buffer.concat([tail, chunk]);
    for (let at = text.indexOf(STATUS_LINE); at !== -1; at = text.indexOf(STATUS_LINE, at + 1)) if (at + STATUS_LINE.length > tail.length) seen++;
    tail = text.subarray(Math.max(0, text.length - STATUS_LINE.length + 1));
    if (waiting && seen >= waiting.until) waiting.resolve();
  });
  const send = (n: number) =>
    new Promise<void>((resolve) => {
      waiting = { until: seen + n, resolve };
      socket.write(n === BATCH ? batch : Buffer.concat(Array.from({ length: n }, () => one)));
    });
  const batch = Buffer.concat(Array.from({ length: BATCH }, () => one));
  await send(1);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(first)?.[1]);
  if (status !== expect) throw new Error(`${request.method} ${request.url}: ${status}, expected ${expect}: ${first}`);
  for (let i = 0; i < Math.min(count, 4000); i += BATCH) await send(BATCH);
  const before = process.cpuUsage();
  for (let i = 0; i < count; i += BATCH) await send(BATCH);
  const used = process.cpuUsage(before);
  socket.destroy();
  return (used.user + used.system) / (Math.ceil(count / BATCH) * BATCH);
}

/** A small app as every variant shares it: one error handler, the security headers, a public GET and PUT /plants/:id. */
async function smallApp(
  setup: (app: FastifyInstance) => Promise<void> | void,
  { corsOrigins = [], check = () => undefined }: { corsOrigins?: string[]; check?: RequestCheck } = {},
): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  installErrorHandling(app, 65536);
  // The service's first hook: its headers, then `check` (load shedding) in the same hook unless CORS is on.
  installSecurity(app, { corsOrigins }, check);
  app.decorateRequest('principal', null);
  await setup(app);
  app.get('/plants/:id', { config: { auth: 'plants:read' } }, (request) =>
    Promise.resolve({ id: 1, name: 'Monstera', by: request.principal?.tokenId ?? null }),
  );
  app.put('/plants/:id', { config: { auth: 'plants:write' } }, () => Promise.resolve({ id: 1, name: 'Monstera' }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app;
}

const authenticate = authHook(new TokenVerifier([TOKEN], {} as Store['tokens']));
const authOnly = (app: FastifyInstance) => void app.addHook('onRequest', authenticate);

type Variant = { name: string; app: FastifyInstance };
interface RequestCase {
  what: string;
  request: WireRequest;
  expect: number;
  /** Measured against these variants only (the bare app has no answer to a preflight). */
  only?: string[];
}

const takes = (c: RequestCase, name: string) => c.only === undefined || c.only.includes(name);

/** Runs every case against every variant, alternating, and returns the median µs per request (and the range) of each. */
async function compare(piece: string, variants: Variant[], cases: RequestCase[]): Promise<string[]> {
  const samples = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order, so that no variant always runs first (or right after a collection).
    const order = variants.map((_, i) => variants[(i + round) % variants.length]!);
    for (const { name, app } of order) {
      for (const { what, request, expect } of cases.filter((c) => takes(c, name))) {
        const key = `${what}\u0000${name}`;
        samples.set(key, [...(samples.get(key) ?? []), await cpuPerRequest(app, request, REQUESTS, expect)]);
      }
    }
  }
  await Promise.all(variants.map(({ app }) => app.close()));
  const rows: string[] = [];
  for (const c of cases) {
    const median = (name: string) => {
      const sorted = [...samples.get(`${c.what}\u0000${name}`)!].sort((a, b) => a - b);
      return { median: sorted[Math.floor(sorted.length / 2)]!, low: sorted[0]!, high: sorted.at(-1)! };
    };
    const none = takes(c, 'none') ? median('none') : undefined;
    for (const { name } of variants.filter((v) => takes(c, v.name))) {
      const m = median(name);
      const own = name === 'none' || none === undefined ? '' : `${(m.median - none.median).toFixed(1)}`;
      const what = c.what;
      rows.push(`| ${piece} | ${what} | ${name} | ${m.median.toFixed(1)} (${m.low.toFixed(1)}–${m.high.toFixed(1)}) | ${own} |`);
    }
  }
  return rows;
}

async function corsRows(): Promise<string[]> {
  const none = await smallApp(() => undefined);
  const ours = await smallApp(() => undefined, { corsOrigins: [ORIGIN] });
  const plugin = await smallApp(async (app) => {
    await app.register(cors, {
      origin: [ORIGIN],
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      allowedHeaders: 'authorization, content-type, if-none-match',
      exposedHeaders: EXPOSED,
      maxAge: 600,
    });
  });
  const origin = { origin: ORIGIN };
  return compare(
    'CORS',
    [
      { name: 'none', app: none },
      { name: 'ours', app: ours },
      { name: '@fastify/cors', app: plugin },
    ],
    [
      { what: 'GET with Origin', request: { method: 'GET', url: '/plants/1', headers: origin }, expect: 200 },
      {
        what: 'preflight',
        request: { method: 'OPTIONS', url: '/plants/1', headers: { ...origin, 'access-control-request-method': 'PUT' } },
        expect: 204,
        only: ['ours', '@fastify/cors'],
      },
    ],
  );
}

async function rateLimitRows(): Promise<string[]> {
  const none = await smallApp(authOnly);
  const ours = await smallApp((app) => void app.addHook('onRequest', limitedAuthentication(new MemoryRateLimiter(1e9), authenticate)));
  const plugin = await smallApp(async (app) => {
    authOnly(app);
    // As close to ours as the plugin goes: after authentication, by token or else address (IPv6 by /64), probes exempt.
    await app.register(rateLimit, {
      max: 1e9,
      timeWindow: 60_000,
      hook: 'preHandler',
      enableDraftSpec: true,
      keyGenerator: (request) => (request.principal ? `token:${request.principal.tokenId}` : addressKey(request.ip)),
      allowList: (request) => request.routeOptions.config.probe === true,
      errorResponseBuilder: (_request, context) => new HttpError(429, `too many requests: the limit is ${context.max} per minute`),
    });
  });
  return compare(
    'rate limits',
    [
      { name: 'none', app: none },
      { name: 'ours', app: ours },
      { name: '@fastify/rate-limit', app: plugin },
    ],
    [{ what: 'authenticated GET', request: { method: 'GET', url: '/plants/1', headers: { authorization: `Bearer ${TOKEN}` } }, expect: 200 }],
  );
}

async function overloadRows(): Promise<string[]> {
  const heapLimit = 4096;
  const none = await smallApp(() => undefined);
  const monitor = new OverloadMonitor({ overloadEventLoopDelayMs: 500, overloadHeapUsedMb: heapLimit });
  // As the service checks it: inside the first hook, no hook of its own.
  const ours = await smallApp(() => undefined, { check: (request) => monitor.refusal(request) });
  monitor.start();
  const plugin = await smallApp(async (app) => {
    await app.register(underPressure, { maxEventLoopDelay: 500, maxHeapUsedBytes: heapLimit * 2 ** 20, sampleInterval: 500, retryAfter: 2 });
  });
  const rows = await compare(
    'overload shedding',
    [
      { name: 'none', app: none },
      { name: 'ours', app: ours },
      { name: '@fastify/under-pressure', app: plugin },
    ],
    [{ what: 'GET', request: { method: 'GET', url: '/plants/1' }, expect: 200 }],
  );
  monitor.stop();
  return rows;
}

/** CPU ms of `work`. */
async function cpuMs(work: () => unknown): Promise<number> {
  const before = process.cpuUsage();
  await work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/**
 * The service's own route modules in a bare app (no hooks), its OpenAPI document made either by ours
 * (src/openapi/document.ts, from the routes collected as they register) or by @fastify/swagger: the same routes,
 * the same schemas, so the two differ by the generator only.
 */
async function documentedApp(store: Store, generator: 'ours' | '@fastify/swagger'): Promise<{ app: FastifyInstance; document: () => object }> {
  const app = Fastify({ logger: false }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.decorateRequest('principal', null);
  const routes: RouteOptions[] = [];
  if (generator === 'ours') app.addHook('onRoute', (route) => void routes.push(route));
  else await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 'Plant Store', version: '1.0.0' } } });
  const writes = new Writes(store, 86_400_000);
  await app.register(plantRoutes, { plants: store.plants, writes });
  await app.register(plantListRoute, { plants: store.plants });
  await app.register(plantImportRoute, {
    plants: store.plants,
    writes,
    bodyLimit: 2 ** 30,
    maxRowBytes: 65536,
    timeoutMs: 600_000,
    deadlines: { extend: () => undefined } as never,
    unknownFields: 'lenient',
  });
  await app.register(webhookRoutes, { webhooks: store.webhooks, writes, allowPrivateNetworks: false });
  await app.register(webhookDeliveryRoutes, { webhooks: store.webhooks, writes });
  await app.register(systemRoutes, { store, openApi: () => ({}) });
  await app.ready();
  const documented = { schemas: [...namedSchemas, ...webhookSchemas], webhooks: WEBHOOK_EVENTS, signing: SIGNING, bodyLimit: 1024 * 1024 };
  return { app, document: () => (generator === 'ours' ? buildOpenApi(routes, documented) : app.swagger()) };
}

/** What a document says, for the comparison of features: operations, how their answers are described, what else it has. */
function facts(document: object): string {
  const doc = document as {
    paths?: Record<
      string,
      Record<string, { responses?: Record<string, { description?: string; headers?: object }>; security?: unknown; tags?: unknown }>
    >;
    webhooks?: object;
    components?: { schemas?: object; securitySchemes?: object };
  };
  const operations = Object.values(doc.paths ?? {}).flatMap((path) => Object.values(path));
  const responses = operations.flatMap((operation) => Object.values(operation.responses ?? {}));
  return [
    `${operations.length} operations`,
    `${responses.length} answers, ${responses.filter((r) => r.description === 'Default Response').length} described only as "Default Response", ${responses.filter((r) => r.headers).length} with headers`,
    `${operations.filter((o) => o.security).length} with their security`,
    `${Object.keys(doc.components?.schemas ?? {}).length} named schemas`,
    `security schemes: ${doc.components?.securitySchemes ? 'yes' : 'no'}`,
    `webhooks: ${Object.keys(doc.webhooks ?? {}).length}`,
  ].join('; ');
}

async function openApiRows(): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-bench-plugins-'));
  const store = SqliteStore.open(`file:${join(dir, 'plants.db')}`, { synchronous: 'FULL', busyTimeoutMs: 5000 });
  const generators = ['ours', '@fastify/swagger'] as const;
  const ready: Record<string, number[]> = { ours: [], '@fastify/swagger': [] };
  const made: Record<string, number[]> = { ours: [], '@fastify/swagger': [] };
  const described: Record<string, string> = {};
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const generator of round % 2 === 0 ? generators : [...generators].reverse()) {
        let built: Awaited<ReturnType<typeof documentedApp>> | undefined;
        ready[generator]!.push(await cpuMs(async () => (built = await documentedApp(store, generator))));
        let text = '';
        made[generator]!.push(await cpuMs(() => (text = JSON.stringify(built!.document()))));
        described[generator] = `${text.length} bytes; ${facts(JSON.parse(text) as object)}`;
        await built!.app.close();
      }
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return generators.map(
    (name) =>
      `| OpenAPI | routes registered and ready / the document made (CPU ms) | ${name} | ${median(ready[name]!).toFixed(1)} / ${median(made[name]!).toFixed(1)} | ${described[name]} |`,
  );
}

const measures: Record<string, () => Promise<string[]>> = {
  cors: corsRows,
  'rate-limit': rateLimitRows,
  overload: overloadRows,
  openapi: openApiRows,
};
const rows: string[] = [];
for (const piece of ONLY) rows.push(...(await measures[piece]!()));
process.stdout.write(
  [
    `Node ${process.version}, ${ROUNDS} rounds of ${REQUESTS} requests (loopback HTTP, ${BATCH} pipelined) per variant and case, alternating; CPU µs per request, median (range)`,
    '',
    '| piece | case | variant | CPU µs/request | its own cost (µs, over none), or what the document holds |',
    '|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n'),
);
