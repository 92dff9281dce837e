import assert from 'node:assert/strict';
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { until } from '../toolkit.js';
import { connectProbe } from './load.js';
import { alive, freePort, install, serve, servingChunk, setVersion } from './supervised.js';

/**
 * Reloads that fail. Into a release that crashes a moment after it listens (something it starts then
 * fails): the old worker was told to hand over as soon as the new one said ready, and was gone; the socket
 * closed under its clients, and the slot was left to restarts of the broken release. The reload fails
 * instead, the old worker never having stopped serving. And a SIGHUP sent while a reload fails (the
 * release mended meanwhile) was told "another reload follows this one", and none did.
 */

const TOKEN = 'reload-failures-test-token-0123456789';

describe('a reload that fails', () => {
  test('into a release whose worker crashes right after it is ready: fails, saying why; the old worker serves on, the socket never closed, and is not replaced', async () => {
    const dir = install(join(tempDir(after), 'install'));
    setVersion(dir, '1.0.0-before');
    const port = await freePort();
    const server = await serve(after, { DATABASE_URL: `file:${join(dir, 'plants.db')}`, PLANT_STORE_TOKENS: TOKEN, PORT: String(port) }, { dir });
    const [old] = server.workers();
    // The release installed now says it is ready, then at once that it failed, and exits.
    setVersion(dir, '1.0.0-after');
    appendFileSync(
      servingChunk(dir),
      [
        '{ const send = process.send.bind(process);',
        "  process.send = (message, ...rest) => message?.plantStore === 'ready'",
        "    ? send(message, undefined, undefined, () => send({ plantStore: 'failed', message: 'crashed as it began' }, undefined, undefined, () => process.exit(7)))",
        '    : send(message, ...rest); }',
        '',
      ].join('\n'),
    );
    const probe = connectProbe(port);
    after(() => probe.stop());
    server.signal('SIGHUP');
    await until(() => /reload failed|reloaded/.test(server.stderr()), `the reload to end; stderr: ${server.stderr()}`, { timeoutMs: 120_000 });
    assert.match(
      server.stderr(),
      /plant-store: reload failed: the new worker \d+ exited within 2 s of being ready \(exit code 7\): crashed as it began; the workers of version 1\.0\.0-before keep serving\n/,
    );
    const { refused, opened } = await probe.stop();
    assert.deepEqual(refused, [], `connections refused (of ${opened + refused.length})`);
    assert.equal(alive(old!.pid), true);
    assert.doesNotMatch(server.stdout(), /which hands over/);
    assert.deepEqual(await (await fetch(`${server.url}/healthz`)).json(), { status: 'ok', version: '1.0.0-before' });
    const created = await fetch(`${server.url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{"id":1,"name":"after the failed reload"}',
    });
    assert.equal(created.status, 200);
    // The crashed worker was the reload's, not one serving: no restart of it.
    assert.doesNotMatch(server.stderr(), /starting another/);
    server.signal('SIGTERM');
    assert.deepEqual(await server.exited, { code: 0, signal: null });
  });

  test('a SIGHUP during it: the reload it asked for follows, into the release installed now', async () => {
    const dir = install(join(tempDir(after), 'install'));
    setVersion(dir, '1.0.0-before');
    const server = await serve(after, { DATABASE_URL: `file:${join(dir, 'plants.db')}`, PLANT_STORE_TOKENS: TOKEN }, { dir });
    // The release installed now fails as it starts, once the test says so (the file \`go\` made).
    writeFileSync(
      join(dir, 'hang.js'),
      [
        "import { existsSync, writeFileSync } from 'node:fs';",
        "writeFileSync(new URL('./started', import.meta.url), '');",
        "await new Promise((resolve) => { const timer = setInterval(() => existsSync(new URL('./go', import.meta.url)) && (clearInterval(timer), resolve()), 20); });",
        "throw new Error('this release is broken');",
        '',
      ].join('\n'),
    );
    appendFileSync(servingChunk(dir), "\nawait import('../../hang.js');\n");
    server.signal('SIGHUP');
    await until(() => existsSync(join(dir, 'started')), 'the new worker to start');
    // The release mended, and the service asked again, while the broken one's worker is still starting.
    writeFileSync(join(dir, 'hang.js'), 'export {};\n');
    setVersion(dir, '1.0.0-mended');
    server.signal('SIGHUP');
    await until(() => server.stdout().includes('SIGHUP during a reload: another reload follows this one'), 'the second SIGHUP to be taken');
    writeFileSync(join(dir, 'go'), '');
    await until(
      () => server.stderr().includes('plant-store: reload failed'),
      `the first reload to fail; stderr: ${server.stderr()}; log: ${server.stdout().slice(-3000)}`,
    );
    await until(() => server.stderr().includes('plant-store: reloaded:'), `the second reload; stderr: ${server.stderr()}`, { timeoutMs: 120_000 });
    assert.match(server.stderr(), /plant-store: reloaded: version 1\.0\.0-before → 1\.0\.0-mended\n/);
    assert.deepEqual(await (await fetch(`${server.url}/healthz`)).json(), { status: 'ok', version: '1.0.0-mended' });
    server.signal('SIGTERM');
    assert.deepEqual(await server.exited, { code: 0, signal: null });
  });
});
