import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { until } from '../toolkit.js';
import { holdConnection } from './held-connection.js';
import { install, serve } from './supervised.js';

/**
 * A stop (SIGTERM) soon after a reload, while the old worker still waits for its clients' idle keep-alive
 * connections: the instance drains (SHUTDOWN_DRAIN_MS), serving everything but `/readyz` as before while a
 * balancer takes it out, and the old worker drains with it. It closed those connections at once, and a
 * request a client was sending on one then failed.
 */

const TOKEN = 'reload-stop-test-token-0123456789abcd';

describe('SIGTERM while a reload’s old worker hands over', () => {
  test('its idle keep-alive connections are served through the drain, each answer closing its connection; exit 0', async () => {
    const dir = install(join(tempDir(after), 'install'));
    const server = await serve(
      after,
      { DATABASE_URL: `file:${join(dir, 'plants.db')}`, PLANT_STORE_TOKENS: TOKEN, SHUTDOWN_DRAIN_MS: '3000' },
      { dir },
    );
    const [old] = server.workers();
    // A client's keep-alive connection to the old worker, idle through the reload.
    const idle = await holdConnection(after, server.port);
    server.signal('SIGHUP');
    await until(() => server.stderr().includes('plant-store: reloaded:'), `the reload; stderr: ${server.stderr()}`, { timeoutMs: 120_000 });
    await until(() => new RegExp(`"pid":${old!.pid},[^\n]*"reason":"reload"`).test(server.stdout()), 'the handover');

    server.signal('SIGTERM');
    await until(() => new RegExp(`"pid":${old!.pid},[^\n]*"msg":"asked to stop`).test(server.stdout()), 'the old worker to be told to stop');
    idle.clear();
    const body = '{"id":1,"name":"sent as the instance stops"}';
    idle.socket.write(
      `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    await until(() => idle.closed(), 'the connection to close after its answer');
    assert.match(idle.received(), /^HTTP\/1\.1 200 /, `the request was answered: ${JSON.stringify(idle.received())}`);
    assert.match(idle.received(), /\r\nconnection: close\r\n/i);
    assert.deepEqual(await server.exited, { code: 0, signal: null });
    assert.match(server.stdout(), new RegExp(`"pid":${old!.pid},.*"msg":"asked to stop: the drain goes on for 3 s at most, /readyz 503"`));
  });
});
