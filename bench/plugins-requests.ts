import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import underPressure from '@fastify/under-pressure';
import Fastify, { type FastifyInstance } from 'fastify';
import { TokenVerifier } from '../src/auth/tokens.js';
import { authHook } from '../src/http/auth.js';
import { installErrorHandling, HttpError } from '../src/http/errors.js';
import { OverloadMonitor } from '../src/http/overload.js';
import { addressKey, limitedAuthentication, MemoryRateLimiter } from '../src/http/rate-limit.js';
import { installSecurity, type RequestCheck } from '../src/http/security.js';
import type { Store } from '../src/store/store.js';
import { cpuPerRequest, type WireRequest } from './pipelined-client.js';

/**
 * The request pieces of `npm run bench:plugins`: CORS, rate limits and overload shedding as the service
 * does them, each beside the Fastify plugin configured to do the same job and a bare app ("none"), in small
 * apps that share everything else.
 */

/** How much to measure: rounds (the variants alternating) and requests per variant and case in each. */
export interface Plan {
  rounds: number;
  requests: number;
}

const TOKEN = 'bench-token-0123456789abcdef0123456789';
const ORIGIN = 'https://app.example';
const EXPOSED = ['link', 'location', 'retry-after', 'www-authenticate', 'x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];

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
async function compare(plan: Plan, piece: string, variants: Variant[], cases: RequestCase[]): Promise<string[]> {
  const samples = new Map<string, number[]>();
  for (let round = 0; round < plan.rounds; round++) {
    // Rotate the order, so that no variant always runs first (or right after a collection).
    const order = variants.map((_, i) => variants[(i + round) % variants.length]!);
    for (const { name, app } of order) {
      for (const { what, request, expect } of cases.filter((c) => takes(c, name))) {
        const key = `${what}\u0000${name}`;
        samples.set(key, [...(samples.get(key) ?? []), await cpuPerRequest(app, request, plan.requests, expect)]);
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

export async function corsRows(plan: Plan): Promise<string[]> {
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
    plan,
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

export async function rateLimitRows(plan: Plan): Promise<string[]> {
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
      errorResponseBuilder: (_request, context) => new HttpError('rate_limited', `too many requests: the limit is ${context.max} per minute`),
    });
  });
  return compare(
    plan,
    'rate limits',
    [
      { name: 'none', app: none },
      { name: 'ours', app: ours },
      { name: '@fastify/rate-limit', app: plugin },
    ],
    [{ what: 'authenticated GET', request: { method: 'GET', url: '/plants/1', headers: { authorization: `Bearer ${TOKEN}` } }, expect: 200 }],
  );
}

export async function overloadRows(plan: Plan): Promise<string[]> {
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
    plan,
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
