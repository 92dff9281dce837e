import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Lifecycle, type Service } from '../../src/app/services.js';
import { stopServing } from '../../src/process/signals.js';

/**
 * A serving process's stop (process/signals.ts), the function its SIGTERM, SIGINT and handover run: the
 * drain first (but for SIGINT), then every service within SHUTDOWN_TIMEOUT_MS; the outcome decides the
 * exit code (0 only when stopped). The process tests drive the same through real signals
 * (test/process/supervisor.process.test.ts).
 */

function log(): { errors: string[]; error(details: object | string, message?: string): void } {
  const errors: string[] = [];
  return { errors, error: (details, message) => void errors.push(message ?? (typeof details === 'string' ? details : JSON.stringify(details))) };
}

describe('stopServing', () => {
  test('drains, then stops every service: stopped', async () => {
    const said: string[] = [];
    const lifecycle = new Lifecycle();
    await lifecycle.start(
      { name: 'store', stop: () => void said.push('stop store') },
      { name: 'listener', drain: (reason) => void said.push(`drain ${reason}`), stop: () => void said.push('stop listener') },
    );
    assert.equal(await stopServing(lifecycle, 'leaving', 5000, log()), 'stopped');
    assert.deepEqual(said, ['drain leaving', 'stop listener', 'stop store']);
  });

  test('now (SIGINT): no drain', async () => {
    const said: string[] = [];
    const lifecycle = new Lifecycle();
    await lifecycle.start({ name: 'listener', drain: () => void said.push('drain'), stop: () => void said.push('stop') });
    assert.equal(await stopServing(lifecycle, 'now', 5000, log()), 'stopped');
    assert.deepEqual(said, ['stop']);
  });

  test('a service that fails to stop: failed (exit 1), logged by name, the others stopped', async () => {
    const said: string[] = [];
    const lifecycle = new Lifecycle();
    const failing: Service = { name: 'webhook deliveries', stop: () => Promise.reject(new Error('stuck')) };
    await lifecycle.start({ name: 'store', stop: () => void said.push('stop store') }, failing);
    const logged = log();
    assert.equal(await stopServing(lifecycle, 'handover', 5000, logged), 'failed');
    assert.deepEqual(logged.errors, ['error while shutting down: webhook deliveries']);
    assert.deepEqual(said, ['stop store']);
  });

  test('a drain that fails: failed, and the services still stop', async () => {
    const said: string[] = [];
    const lifecycle = new Lifecycle();
    await lifecycle.start({ name: 'listener', drain: () => Promise.reject(new Error('no')), stop: () => void said.push('stop') });
    assert.equal(await stopServing(lifecycle, 'leaving', 5000, log()), 'failed');
    assert.deepEqual(said, ['stop']);
  });

  test('a stop that outlasts the limit: late (exit 1) as soon as the limit passes, saying so', async () => {
    const lifecycle = new Lifecycle();
    // A request in flight that never finishes holds the listener's stop open.
    await lifecycle.start({ name: 'listener', stop: () => new Promise<void>(() => undefined) });
    const logged = log();
    assert.equal(await stopServing(lifecycle, 'now', 50, logged), 'late');
    assert.match(logged.errors.join('\n'), /still stopping 0\.05 s after the drain .*exiting anyway/);
  });
});
