import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { testApp } from '../helpers.js';
import { until } from '../toolkit.js';

interface OpenApiDoc {
  paths: Record<string, Record<string, { requestBody?: unknown; security?: unknown[] }>>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/** The probes, never counted nor refused (routes marked `probe`). */
const PROBES = new Set(['GET /healthz', 'GET /readyz']);

/** Starts on a minute's first 45 s, so that a fixed one-minute window cannot turn mid-test. */
async function awayFromWindowEdge(): Promise<void> {
  await until(() => Date.now() % 60_000 < 45_000, 'the rate-limit window to be far from its end', { timeoutMs: 20_000, everyMs: 200 });
}

/**
 * The budget an answer reports, read by the current draft's syntax (structured fields, RFC 9651), and
 * checked against draft 06's fields, which say the same until their sunset.
 */
function budgetOf(response: LightMyRequestResponse, limit: number): { remaining: number; reset: number } {
  const what = `${response.statusCode} ${response.payload.slice(0, 200)}`;
  assert.equal(response.headers['ratelimit-policy'], `"default";q=${limit};w=60`, what);
  const budget = /^"default";r=(\d+);t=(\d+)$/.exec(String(response.headers.ratelimit));
  assert.ok(budget, `RateLimit: ${String(response.headers.ratelimit)} (${what})`);
  const [remaining, reset] = [Number(budget[1]), Number(budget[2])];
  assert.ok(reset >= 1 && reset <= 60, `t=${reset}`);
  assert.equal(response.headers['ratelimit-limit'], String(limit), 'draft 06: RateLimit-Limit');
  assert.equal(response.headers['ratelimit-remaining'], String(remaining), 'draft 06: RateLimit-Remaining');
  assert.equal(response.headers['ratelimit-reset'], String(reset), 'draft 06: RateLimit-Reset');
  return { remaining, reset };
}

/**
 * Every operation the OpenAPI document lists (so a new route cannot skip it) answers the request budget
 * in the current draft's fields and draft 06's when RATE_LIMIT_PER_MINUTE is set, whatever its status,
 * and a 429 of the limit says `r=0` with the reset as its Retry-After. The probes answer none.
 */
describe('every operation reports the request budget', async () => {
  const LIMIT = 1000;
  const t = await testApp(after, { config: { rateLimitPerMinute: LIMIT } });
  const doc = (await t.call('GET', '/openapi.json', { token: null })).json<OpenApiDoc>();
  const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({
        name: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase() as 'GET',
        url: path.replace(/\{[^}]+\}/g, '7'),
        body: op.requestBody === undefined ? undefined : { id: 7, name: 'Fern' },
        public: op.security?.length === 0,
      })),
  );

  test('the document lists the operations', () => {
    assert.ok(operations.length >= 20, `only ${operations.length} operations documented`);
  });

  test('with a token: RateLimit-Policy and RateLimit on every answer, the budget counting down', async () => {
    await awayFromWindowEdge();
    // Public operations count against the client address, the others against the token.
    const last = new Map<boolean, number>();
    for (const { name, method, url, body, public: open } of operations) {
      const response = await t.call(method, url, { body });
      if (PROBES.has(name)) {
        assert.equal(response.headers.ratelimit, undefined, `${name} is a probe`);
        assert.equal(response.headers['ratelimit-policy'], undefined, `${name} is a probe`);
        continue;
      }
      const { remaining } = budgetOf(response, LIMIT);
      const before = last.get(open);
      if (before !== undefined) assert.equal(remaining, before - 1, `${name}: counted once`);
      last.set(open, remaining);
    }
  });

  test('past the limit: 429, r=0, t the Retry-After, on every operation', async () => {
    const limited = await testApp(after, { config: { rateLimitPerMinute: 1 } });
    await awayFromWindowEdge();
    let address = 0;
    for (const { name, method, url, body } of operations) {
      if (PROBES.has(name)) continue;
      // Without a token each request counts against its address: a new address each, spent by its first request.
      const remoteAddress = `10.9.${address >> 8}.${address++ & 255}`;
      const send = () =>
        limited.app.inject({
          method,
          url,
          remoteAddress,
          ...(body && { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
        });
      assert.equal(budgetOf(await send(), 1).remaining, 0, name);
      const refused = await send();
      assert.equal(refused.statusCode, 429, `${name}: ${refused.payload}`);
      const { remaining, reset } = budgetOf(refused, 1);
      assert.equal(remaining, 0, name);
      assert.equal(refused.headers['retry-after'], String(reset), name);
    }
  });
});
