import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { openConnection } from '../../src/store/sqlite/connection.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { tempDir } from '../helpers.js';
import { request, run, SERVER_JS, startServer } from '../process.js';
import { sqliteBefore } from '../store/older-schema.js';

/**
 * The real server's start (src/server.ts, src/process/): where the store goes by default, the probes it
 * answers, the warnings it gives, and a start refused with one line naming the setting (every refusal of a
 * setting is also a unit test of test/config/; the first token printed at start: test/auth/start-tokens.process.test.ts).
 */

/** A static token (PLANT_STORE_TOKENS): at least 32 characters. */
const STATIC = 'server-test-static-token-0123456789';

describe('warnings at start', () => {
  test('started as root, logs a warning naming the risk and the systemd unit; as another user, none', async () => {
    const dir = tempDir(after);
    const server = await startServer(after, { env: { DATABASE_URL: `file:${join(dir, 'x.db')}`, PLANT_STORE_TOKENS: STATIC, LOG_FORMAT: 'json' } });
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
    const lines = server.stdout.split('\n').filter((line) => line.includes('running as root'));
    if (process.geteuid?.() === 0) {
      assert.equal(lines.length, 1, server.stdout);
      const line = JSON.parse(lines[0]!) as { level: number; msg: string };
      assert.equal(line.level, 40, 'a warning');
      assert.match(line.msg, /docs\/production\.md/);
    } else assert.deepEqual(lines, []);
  });

  test('started as root with workers, says it once, in the same form: a JSON line of the log at warn, nothing on stderr', async () => {
    const dir = tempDir(after);
    const env = { DATABASE_URL: `file:${join(dir, 'x.db')}`, PLANT_STORE_TOKENS: STATIC, LOG_FORMAT: 'json', WEB_CONCURRENCY: '2' };
    const server = await startServer(after, { env });
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
    assert.doesNotMatch(server.stderr, /running as root/, 'not a plain line beside the log');
    const lines = server.stdout.split('\n').filter((line) => line.includes('running as root'));
    if (process.geteuid?.() === 0) {
      assert.equal(lines.length, 1, server.stdout);
      const line = JSON.parse(lines[0]!) as { level: number; msg: string };
      assert.equal(line.level, 40, 'a warning');
      assert.match(line.msg, /^running as root: .*docs\/production\.md/);
    } else assert.deepEqual(lines, []);
  });

  test('WEBHOOK_ALLOW_PRIVATE_NETWORKS=true is warned about at start, in the log', async () => {
    const url = `file:${join(tempDir(after), 'hooks.db')}`;
    const on = await startServer(after, { env: { DATABASE_URL: url, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', LOG_FORMAT: 'json' } });
    const line = on.stdout.split('\n').find((l) => l.includes('WEBHOOK_ALLOW_PRIVATE_NETWORKS'));
    assert.ok(line, on.stdout);
    assert.equal(JSON.parse(line).level, 40, 'a warning');
    await on.stop();
    const off = await startServer(after, { env: { DATABASE_URL: url, LOG_FORMAT: 'json' } });
    assert.ok(!off.stdout.includes('WEBHOOK_ALLOW_PRIVATE_NETWORKS'));
    await off.stop();
  });
});

describe('a start', () => {
  test('with DATABASE_URL unset, creates ./data/plant-store.db under the working directory, directory included', async () => {
    const dir = tempDir(after);
    const server = await startServer(after, { cwd: dir, env: { DATABASE_URL: undefined, PLANT_STORE_TOKENS: STATIC } });
    assert.ok(existsSync(join(dir, 'data', 'plant-store.db')));
    assert.equal((await request(`${server.url}/plants`, { method: 'POST', token: STATIC, body: '{"id":7,"name":"ivy"}' })).status, 200);
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
  });

  test('/healthz, /readyz and /openapi.json answer 200 without a token', async () => {
    const dir = tempDir(after);
    const server = await startServer(after, { env: { DATABASE_URL: `file:${join(dir, 'x.db')}`, PLANT_STORE_TOKENS: STATIC } });
    for (const path of ['/healthz', '/readyz', '/openapi.json']) {
      const answer = await request(`${server.url}${path}`);
      assert.equal(answer.status, 200, `${path}: ${answer.text}`);
      assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
    }
    assert.equal((await request(`${server.url}/plants`)).status, 401, 'plants still need a token');
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
  });
});

describe('a start refused: one line on stderr naming the setting', () => {
  const cases: [string, Record<string, string>][] = [
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '99999' }],
    ['PORT', { PORT: '-1' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://user:secret@localhost/plants' }],
    ['PLANT_STORE_TOKENS', { PLANT_STORE_TOKENS: ',,' }],
    ['PLANT_STORE_TOKENS', { PLANT_STORE_TOKENS: 'has space' }],
    ['PLANT_STORE_TOKENS', { PLANT_STORE_TOKENS: 'a-token-of-31-characters-012345' }],
    ['BODY_LIMIT', { BODY_LIMIT: 'x' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
  ];
  for (const [setting, env] of cases) {
    test(`${JSON.stringify(env)} stops the start with one line naming ${setting}`, async () => {
      const dir = tempDir(after);
      const result = await run([SERVER_JS], { cwd: dir, env: { PORT: '0', DATABASE_URL: `file:${join(dir, 'x.db')}`, ...env } });
      assert.notEqual(result.code, 0);
      const lines = result.stderr.split('\n').filter((line) => line !== '');
      assert.equal(lines.length, 1, `one line on stderr, got: ${result.stderr}`);
      assert.ok(lines[0]!.includes(setting), `names ${setting}: ${lines[0]}`);
      assert.ok(!result.stderr.includes('secret'), 'a password in a URL is not printed');
      assert.ok(!result.stderr.includes('    at '), 'no stack trace');
      assert.ok(!existsSync(join(dir, 'x.db')), 'nothing was created');
    });
  }

  // The message itself, for values only a setting's schema refuses (test/config/walk.test.ts walks every constraint).
  const outside: Array<[Record<string, string>, string]> = [
    [{ WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 150 }, () => '5').join(',') }, 'WEBHOOK_RETRY_SCHEDULE: must have at most 100 waits, got 150'],
    [{ WEBHOOK_RETRY_SCHEDULE: '5,2592001' }, 'WEBHOOK_RETRY_SCHEDULE: wait 2 must be between 0 and 2592000, got 2592001'],
    [{ PG_POOL_SIZE: '1001' }, 'PG_POOL_SIZE: must be between 1 and 1000, got 1001'],
    [{ LOG_FORMAT: 'xml' }, 'LOG_FORMAT: must be one of auto, json, pretty, got "xml"'],
  ];
  for (const [env, message] of outside) {
    test(message, async () => {
      const result = await run([SERVER_JS], { env: { PORT: '0', ...env } });
      assert.equal(result.code, 1);
      assert.deepEqual(
        result.stderr.split('\n').filter((line) => line !== ''),
        [`plant-store: cannot start: ${message}`],
      );
      assert.equal(result.stdout, '');
    });
  }

  const CLAIMS = { JWT_ISSUER: 'https://id.example/', JWT_AUDIENCE: 'plant-store' };

  test('a server started with JWT_JWKS_URL but no JWT_ISSUER stops with one line on stderr', async () => {
    const result = await run([SERVER_JS], { env: { JWT_JWKS_URL: 'https://id.example/jwks.json', JWT_AUDIENCE: 'a', PORT: '0' } });
    assert.equal(result.code, 1);
    const lines = result.stderr.split('\n').filter((line) => line !== '');
    assert.deepEqual(lines, ['plant-store: cannot start: JWT_ISSUER: is required with JWT_JWKS_URL: the issuer (iss) that accepted JWTs name']);
    assert.equal(result.stdout, '');
  });

  test('a server started with a plain-http JWKS URL to a host that is not loopback stops, naming JWT_JWKS_URL', async () => {
    const result = await run([SERVER_JS], { env: { JWT_JWKS_URL: 'http://id.example/jwks.json', ...CLAIMS, PORT: '0' } });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^plant-store: cannot start: JWT_JWKS_URL: must be https:\/\/ .*"http:\/\/id\.example\/jwks\.json"\n$/);
  });

  test('a DATABASE_URL that cannot be opened stops the start with one line naming it', async () => {
    const dir = tempDir(after);
    writeFileSync(join(dir, 'not-a-database.db'), 'this is not an SQLite file, just text long enough to be read as a header'.repeat(20));
    const result = await run([SERVER_JS], { env: { PORT: '0', DATABASE_URL: `file:${join(dir, 'not-a-database.db')}` } });
    assert.equal(result.code, 1);
    const lines = result.stderr.split('\n').filter((line) => line !== '');
    assert.equal(lines.length, 1, result.stderr);
    assert.match(lines[0]!, /DATABASE_URL/);
  });

  test('a port in use stops the start with one line naming the settings, the address and the cause', async () => {
    const dir = tempDir(after);
    const first = await startServer(after, { env: { DATABASE_URL: `file:${join(dir, 'a.db')}`, PLANT_STORE_TOKENS: STATIC } });
    const result = await run([SERVER_JS], {
      env: { PORT: String(first.port), DATABASE_URL: `file:${join(dir, 'b.db')}`, PLANT_STORE_TOKENS: STATIC },
    });
    assert.equal(result.code, 1);
    const lines = result.stderr.split('\n').filter((line) => line !== '');
    assert.equal(lines.length, 1, result.stderr);
    assert.equal(lines[0], `plant-store: cannot start: HOST/PORT: cannot listen on 127.0.0.1:${first.port} (EADDRINUSE)`);
    assert.deepEqual(await first.stop(), { code: 0, signal: null });
  });
});

describe('the schema at start', () => {
  test('a store an earlier release left: the log names each migration applied, at info, with the store; the next start, none', async () => {
    const file = join(tempDir(after), 'older.db');
    const db = openConnection(file);
    sqliteBefore(db, 'idempotency_outcomes');
    db.close();
    const env = { DATABASE_URL: `file:${file}`, PLANT_STORE_TOKENS: STATIC, LOG_FORMAT: 'json' };
    const first = await startServer(after, { env });
    assert.deepEqual(await first.stop(), { code: 0, signal: null });
    const applied = migrationLines(first.stdout);
    assert.equal(applied.length, 1, first.stdout);
    const rest = SQLITE_MIGRATIONS.slice(SQLITE_MIGRATIONS.findIndex((m) => m.name === 'idempotency_outcomes'));
    assert.deepEqual(
      {
        level: applied[0]!.level,
        msg: applied[0]!.msg,
        store: applied[0]!.store,
        database: applied[0]!.database,
        migrations: applied[0]!.migrations,
      },
      {
        level: 30,
        msg: `applied migrations ${rest.map((m) => `${m.version} (${m.name})`).join(', ')} to the sqlite store`,
        store: 'sqlite',
        database: `file:${file}`,
        migrations: rest.map((m) => m.version),
      },
    );
    const second = await startServer(after, { env });
    assert.deepEqual(await second.stop(), { code: 0, signal: null });
    assert.deepEqual(migrationLines(second.stdout), [], 'nothing applied, nothing said');
  });
});

/** The log's lines about migrations applied as the store opened. */
function migrationLines(stdout: string): Array<{ level: number; msg: string; store: string; database: string; migrations: number[] }> {
  return stdout
    .split('\n')
    .filter((line) => line.includes('"migrations":'))
    .map((line) => JSON.parse(line) as { level: number; msg: string; store: string; database: string; migrations: number[] });
}
