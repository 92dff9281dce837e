import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { backupName } from '../../src/backups/names.js';
import { tempDir } from '../helpers.js';
import { scrape, valueOf } from '../metrics/scrape.js';
import { request, run, SERVER_JS, startServer, type ServerProcess } from '../process.js';
import { integrity, plantsIn } from '../store/sqlite/backup/files.js';
import { until } from '../toolkit.js';

/** BACKUP_DIR: the server takes backups on its schedule, names, prunes, counts and logs them, and never fails for them. */

const TOKEN = 'server-backup-token-0123456789abcdef';
const BACKUP = /^plants-\d{8}T\d{6}Z\.db$/;

interface LogLine {
  level: number;
  pid: number;
  msg: string;
  file?: string;
}

const logLines = (server: ServerProcess): LogLine[] =>
  server.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
const taken = (server: ServerProcess) => logLines(server).filter((line) => line.msg.startsWith('backup taken: '));
const failed = (server: ServerProcess) => logLines(server).filter((line) => line.msg.startsWith('backup failed: '));
const metricsUrl = (server: ServerProcess) => /metrics listening at (http:\/\/\S+\/metrics)/.exec(`${server.stdout}${server.stderr}`)?.[1];

function env(dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: `file:${join(dir, 'plants.db')}`,
    PLANT_STORE_TOKENS: TOKEN,
    BACKUP_DIR: join(dir, 'backups'),
    BACKUP_INTERVAL: '1s',
    BACKUP_KEEP: '2',
    METRICS_PORT: '0',
    LOG_FORMAT: 'json',
    ...extra,
  };
}

describe('scheduled backups by the server', () => {
  it('takes them every interval, keeps the newest, counts and logs each, and a failure neither stops it nor the server', async () => {
    const dir = tempDir(after);
    const into = join(dir, 'backups');
    const server = await startServer(after, { env: env(dir) });
    for (let id = 1; id <= 20; id++) await request(`${server.url}/plants/${id}`, { method: 'PUT', token: TOKEN, body: `{"name":"p${id}"}` });
    const count = taken(server).length;
    await until(() => taken(server).length >= count + 3, 'three more backups', { timeoutMs: 60_000 });

    const names = readdirSync(into).sort();
    assert.equal(names.length, 2, names.join(' '));
    for (const name of names) {
      assert.match(name, BACKUP);
      assert.equal(integrity(join(into, name)), 'ok');
    }
    assert.equal(plantsIn(join(into, names[1]!)).size, 20, 'the newest holds every plant written before it');
    assert.ok(taken(server).every((line) => line.level === 30 && BACKUP.test(line.file!.split('/').at(-1)!)));
    const { metrics } = await scrape(metricsUrl(server)!);
    assert.ok(valueOf(metrics, 'plant_store_backups_total', { outcome: 'ok' })! >= count + 3);
    assert.equal(valueOf(metrics, 'plant_store_backups_total', { outcome: 'failed' }), 0);
    assert.ok(valueOf(metrics, 'plant_store_backup_last_success_timestamp_seconds')! > Date.now() / 1000 - 60);

    // The directory gone: each backup fails, logged as an error and counted, and the server serves on.
    rmSync(into, { recursive: true });
    // (One in progress when it went fails as its file cannot be written; the next ones before they begin.)
    const missing = `backup failed: the directory ${into} does not exist; the next attempt is in 1s`;
    await until(() => failed(server).some((line) => line.msg === missing), 'a failed backup', { timeoutMs: 60_000 });
    assert.ok(failed(server).every((line) => line.level === 50 && / the next attempt is in 1s$/.test(line.msg)));
    assert.equal((await request(`${server.url}/plants/21`, { method: 'PUT', token: TOKEN, body: '{"name":"p21"}' })).status, 201);
    const later = await scrape(metricsUrl(server)!);
    assert.ok(valueOf(later.metrics, 'plant_store_backups_total', { outcome: 'failed' })! >= 1);
    // …and once it is back, the next one is taken.
    mkdirSync(into);
    await until(() => readdirSync(into).some((name) => BACKUP.test(name)), 'a backup once the directory is back', { timeoutMs: 60_000 });
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
  });

  it('with several workers (WEB_CONCURRENCY=2), one worker takes them all, and the supervisor serves their metrics with the others', async () => {
    const dir = tempDir(after);
    // A backup just taken, so that the first is due an interval after the start, not while the workers start
    // (a loaded machine gives a start 30 s at most).
    mkdirSync(join(dir, 'backups'));
    writeFileSync(join(dir, 'backups', backupName(join(dir, 'plants.db'), new Date())), '');
    const server = await startServer(after, { env: env(dir, { WEB_CONCURRENCY: '2', BACKUP_INTERVAL: '3s', BACKUP_KEEP: '10' }) });
    await until(() => (server.stdout.match(/Server listening at/g) ?? []).length === 2, 'two workers to listen', { timeoutMs: 30_000 });
    await until(() => taken(server).length >= 3, 'three backups', { timeoutMs: 60_000 });
    const pids = new Set(taken(server).map((line) => line.pid));
    assert.equal(pids.size, 1, 'every backup taken by one process');
    assert.ok(!pids.has(server.child.pid!), 'a worker: the supervisor runs none of the service');
    const names = readdirSync(join(dir, 'backups'));
    assert.equal(new Set(names).size, names.length);
    assert.ok(names.length >= 4 && names.every((name) => BACKUP.test(name)), names.join(' '));
    await request(`${server.url}/healthz`);
    const { metrics } = await scrape(metricsUrl(server)!);
    assert.ok(valueOf(metrics, 'plant_store_backups_total', { outcome: 'ok' })! >= 3);
    assert.ok(metrics.http_requests_total !== undefined, "the workers' metrics too");
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
  });

  it('a BACKUP_DIR that cannot be made stops the start, naming it', async () => {
    const dir = tempDir(after);
    writeFileSync(join(dir, 'a-file'), '');
    const ran = await run([SERVER_JS], { env: env(dir, { BACKUP_DIR: join(dir, 'a-file', 'backups') }) });
    assert.equal(ran.code, 1);
    assert.match(ran.stderr, /^plant-store: cannot start: BACKUP_DIR: cannot write backups into .*a-file\/backups \(ENOTDIR\)\n$/);
  });
});
