import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, test } from 'node:test';
import { createLogger } from '../../src/logging/logger.js';
import { assertError, openSqlite, tempDir, testApp } from '../helpers.js';
import { needs } from '../toolkit.js';

/**
 * A database file that stops being writable while the service runs. As root a chmod changes nothing,
 * so the files are made immutable (chattr +i, ext4 and most Linux filesystems). The shared-memory
 * index (-shm) is left alone: SQLite maps it, and an immutable mapping ends the process with SIGBUS,
 * which is a different failure (the kernel's, not a full or read-only disk).
 */
function chattr(flag: '+i' | '-i', paths: string[]): string | undefined {
  try {
    execFileSync('chattr', [flag, ...paths], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return (error as { stderr?: Buffer }).stderr?.toString().trim() || String(error);
  }
}

/** Whether this machine lets us make a file immutable: tried on a scratch file before the test is declared. */
function immutabilityUnavailable(): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-chattr-probe-'));
  const file = join(dir, 'probe');
  writeFileSync(file, 'x');
  const refused = chattr('+i', [file]);
  if (refused === undefined) chattr('-i', [file]);
  rmSync(dir, { recursive: true, force: true });
  return refused;
}

const refused = immutabilityUnavailable();
const skip = needs('the unwritable-file test', refused === undefined ? false : `chattr +i is not possible here: ${refused}`);

test('an unwritable database file: writes answer 503 with a log line, reads go on, writes resume when it is writable again', { skip }, async () => {
  const dir = tempDir(after);
  const log = new PassThrough();
  const lines: string[] = [];
  log.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  const app = await testApp(after, { store: openSqlite(dir), logger: createLogger('warn', log) });

  assert.equal((await app.call('POST', '/plants', { body: { id: 1, name: 'before' } })).statusCode, 200);
  const files = [join(dir, 'plants.db'), join(dir, 'plants.db-wal'), dir];
  assert.equal(chattr('+i', files), undefined);
  try {
    const res = await app.call('POST', '/plants', { body: { id: 2, name: 'refused' } });
    const message = assertError(res, 503);
    assert.match(message, /unavailable/);
    assert.equal(res.headers['retry-after'], '1');
    assert.ok(
      lines.some((line) => /store unavailable/.test(line) && /SQLITE_(IOERR|READONLY|CANTOPEN)/.test(line)),
      lines.join('\n'),
    );
    assertError(await app.call('DELETE', '/plants/1'), 503);
    // Reads need no write.
    assert.deepEqual((await app.call('GET', '/plants/1')).json(), { id: 1, name: 'before' });
  } finally {
    assert.equal(chattr('-i', files), undefined);
  }
  assert.equal((await app.call('POST', '/plants', { body: { id: 3, name: 'after' } })).statusCode, 200);
  const all = (await app.call('GET', '/plants')).json();
  assert.deepEqual(all, [
    { id: 1, name: 'before' },
    { id: 3, name: 'after' },
  ]);
});
