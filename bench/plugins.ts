import { parseArgs } from 'node:util';
import { BATCH } from './pipelined-client.js';
import { openApiRows } from './plugins-openapi.js';
import { corsRows, overloadRows, rateLimitRows, type Plan } from './plugins-requests.js';

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
const plan: Plan = { rounds: ROUNDS, requests: REQUESTS };

const measures: Record<string, () => Promise<string[]>> = {
  cors: () => corsRows(plan),
  'rate-limit': () => rateLimitRows(plan),
  overload: () => overloadRows(plan),
  openapi: () => openApiRows(ROUNDS),
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
