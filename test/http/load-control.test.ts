import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { FastifyRequest, LightMyRequestResponse } from 'fastify';
import { OverloadMonitor, type LoadSample } from '../../src/http/overload.js';
import { addressKey, MemoryRateLimiter } from '../../src/http/rate-limit.js';
import { MAX_ADDRESS_KEYS } from '../../src/http/rate-windows.js';
import { assertError, testApp, TOKEN } from '../helpers.js';
import { until } from '../toolkit.js';

/** Starts on a fresh minute's first 50 s, so that a fixed one-minute window cannot turn mid-test. */
async function awayFromWindowEdge(): Promise<void> {
  await until(async () => Date.now() % 60_000 < 50_000, 'the rate-limit window to be far from its end');
}

/** The current draft's RateLimit and RateLimit-Policy, and draft 06's fields (deprecated) saying the same. */
function assertRateHeaders(response: LightMyRequestResponse, limit: number, remaining: number): void {
  assert.equal(response.headers['ratelimit-policy'], `"default";q=${limit};w=60`);
  const budget = /^"default";r=(\d+);t=(\d+)$/.exec(String(response.headers.ratelimit));
  assert.ok(budget, `RateLimit: ${String(response.headers.ratelimit)}`);
  assert.equal(Number(budget[1]), remaining);
  assert.ok(Number(budget[2]) >= 1 && Number(budget[2]) <= 60);
  assert.equal(response.headers['ratelimit-limit'], String(limit));
  assert.equal(response.headers['ratelimit-remaining'], String(remaining));
  assert.equal(response.headers['ratelimit-reset'], budget[2]);
}

describe('rate limiting', async () => {
  test('a fixed window per key, reset when the minute turns', () => {
    let now = 60_000 * 1000 + 15_000;
    const limiter = new MemoryRateLimiter(2, () => now);
    assert.deepEqual(limiter.hit('a'), { allowed: true, limit: 2, remaining: 1, resetSeconds: 45 });
    assert.equal(limiter.hit('a').allowed, true);
    assert.deepEqual(limiter.hit('a'), { allowed: false, limit: 2, remaining: 0, resetSeconds: 45 });
    assert.equal(limiter.hit('b').remaining, 1, 'keys are counted apart');
    now += 45_000;
    assert.equal(limiter.hit('a').allowed, true, 'a new window');
  });

  test("past MAX_ADDRESS_KEYS new addresses share one bucket, but a token's budget is never shared with them", () => {
    const now = 60_000 * 1000 + 15_000;
    const limiter = new MemoryRateLimiter(3, () => now);
    for (let i = 0; i < MAX_ADDRESS_KEYS; i++) limiter.hit(`ip:10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    // A flood of new addresses: they share the overflow bucket, so memory stays bounded and they run out together.
    for (let i = 0; i < 3; i++) assert.equal(limiter.hit(`ip:192.0.2.${i}`).allowed, true);
    assert.equal(limiter.hit('ip:192.0.2.200').allowed, false, 'the shared bucket is spent');
    assert.equal(limiter.hit('ip6:2001:db8:1:2::/64').allowed, false);
    // A token first seen now still has its whole budget, and so has each other token.
    for (const token of ['token:stored-1', 'token:jwt:https://id.example/:alice', 'token:static']) {
      assert.deepEqual(
        [1, 2, 3, 4].map(() => limiter.hit(token).allowed),
        [true, true, true, false],
        token,
      );
    }
    assert.equal(limiter.hit('ip:10.0.0.1').allowed, true, 'an address counted before the cap keeps its own bucket');
  });

  test('off by default: no RateLimit headers, no 429', async () => {
    const t = await testApp(after);
    for (let i = 0; i < 30; i++) assert.equal((await t.call('GET', '/plants')).statusCode, 200);
    const headers = (await t.call('GET', '/plants')).headers;
    for (const field of ['ratelimit', 'ratelimit-policy', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
      assert.equal(headers[field], undefined, field);
    }
  });

  test('per token: the limit, then 429 with Retry-After and the RateLimit headers; other tokens unaffected', async () => {
    const t = await testApp(after, { config: { rateLimitPerMinute: 5 } });
    const other = await t.tokenWith('plants:read');
    await awayFromWindowEdge();
    for (let i = 0; i < 5; i++) {
      const response = await t.call('GET', '/plants');
      assert.equal(response.statusCode, 200);
      assertRateHeaders(response, 5, 4 - i);
    }
    const refused = await t.call('GET', '/plants');
    assertError(refused, 429, 'per minute');
    assertRateHeaders(refused, 5, 0);
    assert.equal(refused.headers['retry-after'], refused.headers['ratelimit-reset']);
    assert.match(String(refused.headers.ratelimit), new RegExp(`^"default";r=0;t=${refused.headers['retry-after']}$`));
    assert.equal((await t.call('GET', '/plants', { token: other })).statusCode, 200);
  });

  test('per address without a valid token: public routes, missing and refused tokens; 429 past the limit', async () => {
    const t = await testApp(after, { config: { rateLimitPerMinute: 5 } });
    await awayFromWindowEdge();
    const from = (remoteAddress: string, url: string, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'GET', url, remoteAddress, headers });

    for (let i = 0; i < 5; i++) assert.equal((await from('10.0.0.1', '/openapi.json')).statusCode, 200);
    assertError(await from('10.0.0.1', '/openapi.json'), 429, 'too many requests from this address');
    assert.equal((await from('10.0.0.2', '/openapi.json')).statusCode, 200, 'another address has its own count');

    for (let i = 0; i < 3; i++) assert.equal((await from('10.0.0.3', '/plants', { authorization: `Bearer wrong${i}` })).statusCode, 401);
    for (let i = 0; i < 2; i++) assert.equal((await from('10.0.0.3', '/plants')).statusCode, 401, 'no token at all counts too');
    const refused = await from('10.0.0.3', '/plants', { authorization: 'Bearer wrong-again' });
    assertError(refused, 429, 'address');
    assert.equal(refused.headers['retry-after'], refused.headers['ratelimit-reset']);
    assertError(await from('10.0.0.3', '/plants'), 429, 'address');
  });

  test('a valid token is never refused by its address, and probes are never limited', async () => {
    const t = await testApp(after, { config: { rateLimitPerMinute: 5 } });
    await awayFromWindowEdge();
    const from = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, remoteAddress: '10.0.0.9', headers });
    for (let i = 0; i < 20; i++) await from('/plants', { authorization: `Bearer wrong${i}` });
    assertError(await from('/plants'), 429, 'address');
    const valid = await from('/plants', { authorization: `Bearer ${TOKEN}` });
    assert.equal(valid.statusCode, 200, 'the address is spent, the token is not');
    assertRateHeaders(valid, 5, 4);
    for (let i = 0; i < 20; i++) {
      assert.equal((await from('/healthz')).statusCode, 200, '/healthz');
      assert.equal((await from('/readyz')).statusCode, 200, '/readyz');
    }
    assert.equal((await from('/healthz')).headers['ratelimit-limit'], undefined, 'probes are not counted');
    assert.equal((await from('/readyz')).headers.ratelimit, undefined, 'probes are not counted');
  });

  test('IPv6 addresses count by their /64; IPv4-mapped ones as IPv4', async () => {
    assert.equal(addressKey('2001:db8:1:2:aaaa::1'), 'ip6:2001:db8:1:2::/64');
    assert.equal(addressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), 'ip6:2001:db8:1:2::/64');
    assert.equal(addressKey('2001:db8::1'), 'ip6:2001:db8:0:0::/64');
    assert.equal(addressKey('::1'), 'ip6:0:0:0:0::/64');
    assert.equal(addressKey('::ffff:10.1.2.3'), 'ip:10.1.2.3');
    assert.equal(addressKey('10.1.2.3'), 'ip:10.1.2.3');
    const t = await testApp(after, { config: { rateLimitPerMinute: 3 } });
    await awayFromWindowEdge();
    const from = (remoteAddress: string) => t.app.inject({ method: 'GET', url: '/openapi.json', remoteAddress });
    for (const address of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff::3']) assert.equal((await from(address)).statusCode, 200);
    assertError(await from('2001:db8:1:2::4'), 429, 'address');
    assert.equal((await from('2001:db8:1:3::1')).statusCode, 200, 'another /64');
  });

  test('behind a proxy (TRUST_PROXY): the forwarded client address counts; a flood from one client locks out neither tokens nor probes', async () => {
    const proxy = '10.9.9.9';
    const t = await testApp(after, { config: { rateLimitPerMinute: 5, trustProxy: [proxy] } });
    await awayFromWindowEdge();
    const via = (client: string, url: string, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'GET', url, remoteAddress: proxy, headers: { 'x-forwarded-for': client, ...headers } });
    for (let i = 0; i < 10; i++) await via('203.0.113.7', '/plants', { authorization: `Bearer flood${i}` });
    assertError(await via('203.0.113.7', '/plants'), 429, 'address');
    assert.equal((await via('198.51.100.1', '/openapi.json')).statusCode, 200, 'another client behind the same proxy has its own count');
    assert.equal((await via('203.0.113.7', '/plants', { authorization: `Bearer ${TOKEN}` })).statusCode, 200, 'a valid token passes');
    assert.equal((await via('198.51.100.1', '/plants', { authorization: `Bearer ${TOKEN}` })).statusCode, 200);
    assert.equal((await via('203.0.113.7', '/readyz')).statusCode, 200, 'readiness is never limited');

    // Without TRUST_PROXY the header is not believed: every client is the proxy's address.
    const direct = await testApp(after, { config: { rateLimitPerMinute: 5 } });
    const plain = (client: string) =>
      direct.app.inject({ method: 'GET', url: '/openapi.json', remoteAddress: proxy, headers: { 'x-forwarded-for': client } });
    for (let i = 0; i < 5; i++) assert.equal((await plain(`203.0.113.${i}`)).statusCode, 200);
    assertError(await plain('203.0.113.99'), 429, 'address');
    // A hop count trusts that many proxies in front.
    const hops = await testApp(after, { config: { rateLimitPerMinute: 1, trustProxy: 1 } });
    const hop = (client: string) =>
      hops.app.inject({ method: 'GET', url: '/openapi.json', remoteAddress: proxy, headers: { 'x-forwarded-for': client } });
    assert.equal((await hop('203.0.113.1')).statusCode, 200);
    assert.equal((await hop('203.0.113.2')).statusCode, 200, 'each forwarded client counted apart');
    assertError(await hop('203.0.113.1'), 429);
  });
});

describe('overload shedding', async () => {
  test('the monitor changes state on thresholds and reports each change once', () => {
    let load: LoadSample = { eventLoopDelayMs: 5, heapUsedMb: 50 };
    const changes: Array<string | undefined> = [];
    const monitor = new OverloadMonitor(
      { overloadEventLoopDelayMs: 100, overloadHeapUsedMb: 500 },
      (r) => changes.push(r),
      () => load,
    );
    monitor.sample();
    assert.equal(monitor.overloaded, undefined);
    load = { eventLoopDelayMs: 250, heapUsedMb: 50 };
    monitor.sample();
    assert.equal(monitor.overloaded, undefined, 'one window over the limit is one long turn, not a lag that lasts');
    load = { eventLoopDelayMs: 5, heapUsedMb: 50 };
    monitor.sample();
    load = { eventLoopDelayMs: 250, heapUsedMb: 50 };
    monitor.sample();
    assert.equal(monitor.overloaded, undefined, 'windows over it must follow each other');
    monitor.sample();
    assert.match(monitor.overloaded ?? '', /event loop lags 250 ms/);
    load = { eventLoopDelayMs: 5, heapUsedMb: 900 };
    monitor.sample();
    assert.match(monitor.overloaded ?? '', /heap holds 900 MiB/);
    load = { eventLoopDelayMs: 5, heapUsedMb: 50 };
    monitor.sample();
    assert.equal(monitor.overloaded, undefined);
    assert.equal(changes.length, 2, 'one report on entering, one on leaving');
  });

  test('the loop is watched only while requests come: 30 s without one stops the histogram, a request starts it', (t) => {
    const monitor = new OverloadMonitor({ overloadEventLoopDelayMs: 100, overloadHeapUsedMb: 500 });
    const request = { routeOptions: { config: {} } } as unknown as FastifyRequest;
    assert.equal(monitor.refusal(request), undefined);
    assert.equal(monitor.watchingLoop, false, 'not before it is started');
    monitor.start();
    t.after(() => monitor.stop());
    assert.equal(monitor.watchingLoop, false, 'an idle process sleeps from the start');
    monitor.refusal(request);
    assert.equal(monitor.watchingLoop, true, 'the first request starts it');
    // Samples every half second: a health check every 10 s (Kubernetes' default) keeps it running.
    for (let check = 0; check < 3; check++) {
      for (let sample = 0; sample < 20; sample++) monitor.sample();
      assert.equal(monitor.watchingLoop, true, 'requests 10 s apart keep it');
      monitor.refusal(request);
    }
    // The window with the request, then 59 quiet ones: 29.5 s.
    for (let sample = 0; sample < 60; sample++) monitor.sample();
    assert.equal(monitor.watchingLoop, true, 'still within 30 s of the last request');
    monitor.sample();
    assert.equal(monitor.watchingLoop, false, '30 s without one stops it');
    assert.equal(monitor.sample().eventLoopDelayMs, 0, 'and nothing is read while it sleeps');
    monitor.refusal(request);
    assert.equal(monitor.watchingLoop, true, 'the next request starts it again');
    monitor.stop();
    assert.equal(monitor.watchingLoop, false, 'stopped with the monitor');
  });

  test('a lagging event loop: 503 with Retry-After in the Error shape, /healthz still answers, then recovery', async () => {
    const t = await testApp(after, { config: { overloadEventLoopDelayMs: 40 } });
    // Sustained overload: every turn of the loop busy for 80 ms, as under a flood of requests.
    const busy = setInterval(() => {
      const end = Date.now() + 80;
      while (Date.now() < end);
    }, 1);
    after(() => clearInterval(busy));
    await until(async () => (await t.call('GET', '/plants')).statusCode === 503, 'shedding to start');
    const shed = await t.call('POST', '/plants', { body: { id: 1, name: 'Fern' } });
    assertError(shed, 503, 'overloaded');
    assert.equal(shed.headers['retry-after'], '2');
    assert.equal(shed.headers['x-content-type-options'], 'nosniff');
    assert.equal((await t.call('GET', '/healthz', { token: null })).statusCode, 200, 'healthz stays cheap and answers');
    assert.equal((await t.call('GET', '/readyz', { token: null })).statusCode, 503, 'readyz takes the instance out of rotation');
    clearInterval(busy);
    await until(async () => (await t.call('GET', '/plants')).statusCode === 200, 'shedding to stop');
    assert.equal(await t.store.plants.get(1), undefined, 'the shed write was not carried out');
  });

  test('a heap over its threshold sheds too', async () => {
    const t = await testApp(after, { config: { overloadHeapUsedMb: 1 } });
    await until(async () => (await t.call('GET', '/plants')).statusCode === 503, 'shedding to start');
    assertError(await t.call('GET', '/plants/1'), 503, 'heap');
    assert.equal((await t.call('GET', '/healthz', { token: null })).statusCode, 200);
  });
});
