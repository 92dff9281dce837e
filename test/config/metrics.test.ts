import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.js';

/** METRICS_PORT, METRICS_HOST and METRICS_ALLOWED_HOSTS (see src/metrics/). */
describe('metrics settings', () => {
  it('are off by default, on loopback when on', () => {
    const config = loadConfig({});
    assert.equal(config.metricsPort, undefined);
    assert.equal(config.metricsHost, '127.0.0.1');
    assert.equal(loadConfig({ METRICS_PORT: '' }).metricsPort, undefined, 'empty counts as unset');
  });

  it('take a TCP port, 0 for any free one, and any address', () => {
    assert.equal(loadConfig({ METRICS_PORT: '9464' }).metricsPort, 9464);
    assert.equal(loadConfig({ METRICS_PORT: '0' }).metricsPort, 0);
    assert.equal(loadConfig({ METRICS_PORT: '65535' }).metricsPort, 65535);
    assert.equal(loadConfig({ METRICS_PORT: '0', PORT: '0' }).metricsPort, 0, 'two free ports are two ports');
    assert.equal(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' }).metricsHost, '0.0.0.0');
  });

  it('refuse a bad port, or the API port, naming the setting', () => {
    for (const env of [
      { METRICS_PORT: 'abc' },
      { METRICS_PORT: '70000' },
      { METRICS_PORT: '-1' },
      { METRICS_PORT: '9464.5' },
      { METRICS_PORT: '8080' },
    ]) {
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => error instanceof ConfigError && error.setting === 'METRICS_PORT',
        JSON.stringify(env),
      );
    }
    assert.throws(() => loadConfig({ PORT: '9000', METRICS_PORT: '9000' }), /METRICS_PORT: must differ from PORT \(9000\)/);
  });

  it('METRICS_ALLOWED_HOSTS: none by default; host names (lowercased) or *; anything else refused, naming the setting', () => {
    assert.deepEqual(loadConfig({}).metricsAllowedHosts, []);
    assert.deepEqual(loadConfig({ METRICS_ALLOWED_HOSTS: 'Metrics.Internal, prom-1.example' }).metricsAllowedHosts, [
      'metrics.internal',
      'prom-1.example',
    ]);
    assert.deepEqual(loadConfig({ METRICS_ALLOWED_HOSTS: '*' }).metricsAllowedHosts, ['*']);
    for (const text of ['metrics.internal:9464', 'a b', 'http://metrics.internal', '-bad.example', 'a,,b', '*.example']) {
      assert.throws(
        () => loadConfig({ METRICS_ALLOWED_HOSTS: text }),
        (error: unknown) => error instanceof ConfigError && error.setting === 'METRICS_ALLOWED_HOSTS' && !error.message.includes('\n'),
        text,
      );
    }
  });
});
