import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { request, startServer } from '../process.js';
import { needs, until } from '../toolkit.js';
import { assertErrorShape } from '../helpers.js';

/**
 * A disk that fills up, for real: the database lives on a tiny tmpfs (8 MB: the schema, its search index and change feed included, with room for the first writes), a filler file takes the rest of
 * it, and the real server process must answer writes 503 (Error shape, Retry-After) with one clear log
 * line for the outage (not one per refused write), say not ready on /readyz, not crash, keep every plant
 * it acknowledged, and be ready and accept writes again once the filler is gone.
 * Mounting needs root (CAP_SYS_ADMIN); where that is not allowed the test is skipped, and the run says so
 * at its end (in CI it fails: test/toolkit.ts, needs).
 */
const TOKEN = 'disk-full-test-token-0123456789abc';

function tryMount(dir: string): string | undefined {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return (error as { stderr?: Buffer }).stderr?.toString().trim() || String(error);
  }
}

/** Writes zeros until the filesystem refuses: ENOSPC. */
function fill(path: string): void {
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, block);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

// Mounted before the test is declared, so that a machine that cannot mount reports the test as skipped with the reason.
const mountPoint = mkdtempSync(join(tmpdir(), 'plant-store-small-disk-'));
const refused = tryMount(mountPoint);
// One cleanup, in this order: a lazy unmount (the server may still hold files), then the directory.
after(() => {
  if (refused === undefined) execFileSync('umount', ['-l', mountPoint]);
  rmSync(mountPoint, { recursive: true, force: true });
});
const skip = needs('the disk-full test', refused !== undefined && `cannot mount a tmpfs here (${refused}); it needs root with CAP_SYS_ADMIN`);

test('a full disk: writes answer 503 with a clear log line, nothing acknowledged is lost, writes resume when space returns', { skip }, async (t) => {
  const env = { DATABASE_URL: `file:${join(mountPoint, 'plants.db')}`, PLANT_STORE_TOKENS: TOKEN, LOG_LEVEL: 'info' };
  const server = await startServer(after, { env });
  const post = (id: number) =>
    request(`${server.url}/plants`, { method: 'POST', token: TOKEN, body: JSON.stringify({ id, name: `${id} ${'n'.repeat(240)}`, tag: 'full' }) });

  /** The log's lines about the store's writability turning (not the access lines, nor the search index's). */
  const storeLines = () => server.stdout.split('\n').filter((line) => /"msg":"store unavailable/.test(line));

  const acknowledged: number[] = [];
  for (let id = 1; id <= 50; id++) {
    assert.equal((await post(id)).status, 200);
    acknowledged.push(id);
  }
  const filler = join(mountPoint, 'filler');
  fill(filler);

  // The disk is full: keep writing until the database needs space it cannot get.
  let failure: Awaited<ReturnType<typeof post>> | undefined;
  for (let id = 51; id < 20_000 && failure === undefined; id++) {
    const answer = await post(id);
    if (answer.status === 200) acknowledged.push(id);
    else failure = answer;
  }
  assert.ok(failure, 'some write met the full disk');
  assert.equal(failure.status, 503, failure.text);
  assert.equal(failure.headers.get('retry-after'), '1');
  assert.match(failure.headers.get('content-type') ?? '', /^application\/json/);
  const body = JSON.parse(failure.text) as Record<string, unknown>;
  assertErrorShape(body, 503, 'store_unavailable');
  assert.equal(body.error, 503);
  await until(() => /"msg":"store unavailable: [^"]*SQLITE_(FULL|IOERR)/.test(server.stdout), 'the log line', { timeoutMs: 10_000 });
  assert.ok(server.running, 'the process is still up');
  assert.equal((await request(`${server.url}/healthz`)).status, 200);
  // Not ready while writes cannot commit (a load balancer sends them elsewhere): no write has committed
  // since, and /readyz tries none of its own on a filesystem without a free block.
  const notReady = await request(`${server.url}/readyz`);
  assert.equal(notReady.status, 503, notReady.text);
  assertErrorShape(JSON.parse(notReady.text), 503, 'not_ready');
  assert.equal(notReady.headers.get('retry-after'), '1');
  // More writes: one that fits in what the write-ahead log has left may commit (and end the outage), the
  // others are refused. A line is logged as the store turns unwritable, not per refused write: never
  // more than one for each commit between.
  let committed = 0;
  for (let id = 20_000; id < 20_100; id++) {
    const { status } = await post(id);
    assert.ok(status === 200 || status === 503, String(status));
    if (status === 200) acknowledged.push(id);
    committed += status === 200 ? 1 : 0;
  }
  assert.ok(storeLines().length <= committed + 1, `${storeLines().length} lines, ${committed} commits:\n${storeLines().join('\n')}`);
  t.diagnostic(`after the full disk: ${100 - committed} writes refused, ${committed} committed, ${storeLines().length} line(s) saying so`);

  // Reads go on; every acknowledged plant is there.
  for (const id of [1, acknowledged.at(-1)!]) assert.equal((await request(`${server.url}/plants/${id}`, { token: TOKEN })).status, 200);

  rmSync(filler);
  // Ready again with no write sent: the probe commits once there is room.
  await until(async () => (await request(`${server.url}/readyz`)).status === 200, '/readyz 200 once space is free', { timeoutMs: 30_000 });
  await until(() => /"msg":"store available again/.test(server.stdout), 'the line saying so');
  let resumedAt: number | undefined;
  await until(
    async () => {
      const id = 100_000 + acknowledged.length;
      if ((await post(id)).status !== 200) return false;
      resumedAt = id;
      acknowledged.push(id);
      return true;
    },
    'writes to succeed again once space is free',
    { timeoutMs: 30_000 },
  );
  assert.ok(resumedAt);
  for (const id of acknowledged) {
    const answer = await request(`${server.url}/plants/${id}`, { token: TOKEN });
    assert.equal(answer.status, 200, `plant ${id} acknowledged, then ${answer.status}`);
  }
  t.diagnostic(`${acknowledged.length} plants acknowledged around a full disk; the write that met it answered 503; none lost`);
  await server.stop('SIGTERM');
});
