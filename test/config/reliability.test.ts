import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getHeapStatistics } from 'node:v8';
import { ConfigError, loadConfig } from '../../src/config/config.js';

/** The reliability and security settings: defaults, and a bad value named in the message. */

test('defaults: CORS off, timeouts on, connection cap, no rate limit, shedding at 500 ms of event-loop delay', () => {
  const config = loadConfig({});
  assert.deepEqual(config.corsOrigins, []);
  assert.equal(config.headersTimeoutMs, 10_000);
  assert.equal(config.requestTimeoutMs, 30_000);
  assert.equal(config.keepAliveTimeoutMs, 72_000);
  assert.equal(config.maxConnections, 1024);
  assert.equal(config.rateLimitPerMinute, 0);
  assert.equal(config.overloadEventLoopDelayMs, 500);
  // 80% of V8's heap limit, resolved at start.
  assert.equal(config.overloadHeapUsedMb, Math.round((getHeapStatistics().heap_size_limit / 2 ** 20) * 0.8));
  assert.equal(loadConfig({ OVERLOAD_HEAP_USED_MB: '0' }).overloadHeapUsedMb, config.overloadHeapUsedMb);
  assert.equal(loadConfig({ OVERLOAD_HEAP_USED_MB: '300' }).overloadHeapUsedMb, 300);
});

test('CORS_ORIGINS: a list of origins, or *', () => {
  assert.deepEqual(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:3000' }).corsOrigins, [
    'https://a.example',
    'http://localhost:3000',
  ]);
  assert.deepEqual(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins, ['*']);
  // As browsers send them: the scheme's default port dropped, lower case; an IPv6 literal taken.
  assert.deepEqual(
    loadConfig({ CORS_ORIGINS: 'https://App.Example:443, http://a.example:80, http://[::1]:3000, https://b.example:8443' }).corsOrigins,
    ['https://app.example', 'http://a.example', 'http://[::1]:3000', 'https://b.example:8443'],
  );
});

const bad: Array<[Record<string, string>, string]> = [
  [{ CORS_ORIGINS: 'https://a.example/path' }, 'CORS_ORIGINS'],
  [{ CORS_ORIGINS: 'a.example' }, 'CORS_ORIGINS'],
  [{ CORS_ORIGINS: 'http://[zz]:3000' }, 'CORS_ORIGINS'],
  [{ CORS_ORIGINS: 'http://a.example:99999' }, 'CORS_ORIGINS'],
  [{ HEADERS_TIMEOUT_MS: '50' }, 'HEADERS_TIMEOUT_MS'],
  [{ HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '1000' }, 'HEADERS_TIMEOUT_MS'],
  [{ REQUEST_TIMEOUT_MS: 'soon' }, 'REQUEST_TIMEOUT_MS'],
  [{ KEEP_ALIVE_TIMEOUT_MS: '-1' }, 'KEEP_ALIVE_TIMEOUT_MS'],
  [{ MAX_CONNECTIONS: '0' }, 'MAX_CONNECTIONS'],
  [{ RATE_LIMIT_PER_MINUTE: '1.5' }, 'RATE_LIMIT_PER_MINUTE'],
  [{ OVERLOAD_EVENT_LOOP_DELAY_MS: 'x' }, 'OVERLOAD_EVENT_LOOP_DELAY_MS'],
  [{ OVERLOAD_HEAP_USED_MB: '-5' }, 'OVERLOAD_HEAP_USED_MB'],
];
for (const [env, setting] of bad) {
  test(`${JSON.stringify(env)} stops the start naming ${setting}`, () => {
    assert.throws(
      () => loadConfig(env),
      (error: unknown) => error instanceof ConfigError && error.setting === setting && error.message.startsWith(`${setting}: `),
    );
  });
}
