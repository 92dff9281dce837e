import assert from 'node:assert/strict';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { until } from '../toolkit.js';
import { install, serve } from './supervised.js';

/**
 * Reloads into what a deploy leaves on disk (SIGHUP, SQLite, one worker):
 * - the install folder replaced by the new release (moved into place, the old one deleted): the new worker
 *   starts in the folder there now and writes (it started in the deleted one, said ready and refused every
 *   write: its SQLite writer thread could not start);
 * - a release that does not take part in reloads (1.0.0, a rollback in place): refused at once, the worker
 *   serving left in place (1.0.0's worker served beside it until RELOAD_TIMEOUT_MS, then was killed under
 *   its clients).
 */

const TOKEN = 'reload-installs-token-0123456789abcdef';

async function write(url: string, id: number): Promise<number> {
  const answer = await fetch(`${url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id, name: `Plant ${id}` }),
  });
  await answer.body?.cancel();
  return answer.status;
}

describe('a reload into what a deploy left on disk', () => {
  test('the install folder replaced by a new one: the new worker writes, and is ready', async () => {
    const dir = tempDir(after);
    const app = install(join(dir, 'app'));
    const server = await serve(after, { DATABASE_URL: `file:${join(dir, 'store.db')}`, PLANT_STORE_TOKENS: TOKEN }, { dir: app });
    assert.equal(await write(server.url, 1), 200);
    const [before] = server.workers();
    // The deploy: the new release moved into place, the old folder deleted.
    renameSync(app, join(dir, 'app.old'));
    install(app);
    rmSync(join(dir, 'app.old'), { recursive: true, force: true });
    server.signal('SIGHUP');
    await until(() => /plant-store: (reloaded|reload failed)/.exec(server.stderr()), 'the reload to end', { timeoutMs: 60_000 });
    assert.match(server.stderr(), /plant-store: reloaded:/, server.stderr());
    // Its ready line is on its own pipe's way (the supervisor's stderr may be read first).
    await until(() => server.workers().length >= 2, 'the new worker to say it is ready');
    assert.notEqual(server.workers().at(-1)?.pid, before?.pid, 'a new worker serves');
    assert.equal(await write(server.url, 2), 200, 'the new worker writes');
    assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
    assert.equal((await fetch(`${server.url}/plants/1`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200, 'the store kept');
  });

  test('a release that does not take part in reloads (1.0.0): refused at once, the worker serving kept', async () => {
    const dir = tempDir(after);
    const app = install(join(dir, 'app'));
    const server = await serve(after, { DATABASE_URL: `file:${join(dir, 'store.db')}`, PLANT_STORE_TOKENS: TOKEN }, { dir: app });
    const [serving] = server.workers();
    // 1.0.0's package.json: no "plantStore" (what marks a release that speaks the supervisor's protocol).
    const file = join(app, 'package.json');
    const { plantStore: _marked, ...unmarked } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...unmarked, version: '1.0.0' }, null, 2));
    server.signal('SIGHUP');
    const said = await until(() => /^plant-store: reload refused: .*$/m.exec(server.stderr())?.[0], 'the refusal');
    assert.equal(
      said,
      'plant-store: reload refused: the release installed now (version 1.0.0) cannot be reloaded into, as it does not take part in reloads; ' +
        'restart the service to run it (systemctl restart plant-store): the workers serving keep serving',
    );
    assert.match(server.stdout(), /"level":50[^\n]*"msg":"reload refused: the release installed now \(version 1\.0\.0\)/, 'in the log too');
    assert.deepEqual(server.workers(), [serving], 'no worker forked');
    assert.doesNotMatch(server.stderr(), /SIGHUP: reloading/);
    assert.equal(await write(server.url, 1), 200);
    assert.equal(server.running(), true);
  });
});
