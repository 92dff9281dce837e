import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { openConnection, prepare } from '../src/store/sqlite/connection.js';
import { tempDir } from './helpers.js';
import { request, run, SERVER_JS, startServer } from './process.js';

/** The real server process: start-up, the first token, configuration errors, probes. */

/** A static token (PLANT_STORE_TOKENS): at least 32 characters. */
const STATIC = 'server-test-static-token-0123456789';
const TOKEN_PATTERN = /ps_[A-Za-z0-9_-]{20,}/g;

function printedTokens(stderr: string): string[] {
  return [...new Set(stderr.match(TOKEN_PATTERN) ?? [])];
}

describe('first start', () => {
  test('with no token configured and an empty store, prints one token on stderr, stores only its hash', async () => {
    const dir = tempDir(after);
    const databaseUrl = `file:${join(dir, 'x.db')}`;
    const server = await startServer(after, { env: { DATABASE_URL: databaseUrl } });

    const tokens = printedTokens(server.stderr);
    assert.equal(tokens.length, 1, `one token on stderr, got: ${server.stderr}`);
    const token = tokens[0]!;
    assert.match(server.stderr, /Authorization: Bearer /, 'a sentence saying how to use it');
    assert.ok(!server.stdout.includes(token), 'the token is not in the log');

    const created = await request(`${server.url}/plants`, { method: 'POST', token, body: '{"id":1,"name":"fern"}' });
    assert.equal(created.status, 200, created.text);
    assert.equal((await request(`${server.url}/plants/1`, { token })).status, 200);
    assert.equal((await request(`${server.url}/plants/1`, { token: `${token}x` })).status, 401);

    assert.deepEqual(await server.stop(), { code: 0, signal: null });
    const db = openConnection(join(dir, 'x.db'), { readonly: true });
    try {
      const rows = prepare(db, 'SELECT * FROM tokens').all() as Record<string, unknown>[];
      assert.equal(rows.length, 1);
      const stored = JSON.stringify(rows, (_key, value: unknown) => (Buffer.isBuffer(value) ? value.toString('latin1') : value));
      assert.ok(!stored.includes(token) && !stored.includes(token.slice(3)), 'the secret is not stored');
      const hash = rows[0]!.hash as Buffer;
      assert.equal(hash.length, 32, 'a SHA-256 hash');
    } finally {
      db.close();
    }
    // The raw file (WAL checkpointed at close) does not hold the secret either.
    assert.ok(!readFileSync(join(dir, 'x.db')).includes(token.slice(3)));

    const again = await startServer(after, { env: { DATABASE_URL: databaseUrl } });
    assert.deepEqual(printedTokens(again.stderr), [], 'a second start prints no new token');
    assert.equal((await request(`${again.url}/plants/1`, { token })).status, 200, 'the first token still works');
    assert.deepEqual(await again.stop(), { code: 0, signal: null });
  });

  test('with PLANT_STORE_TOKENS set, creates no token', async () => {
    const dir = tempDir(after);
    const server = await startServer(after, {
      env: { DATABASE_URL: `file:${join(dir, 'x.db')}`, PLANT_STORE_TOKENS: `${STATIC}-one,${STATIC}-two` },
    });
    assert.deepEqual(printedTokens(server.stderr), []);
    assert.equal((await request(`${server.url}/plants`, { token: `${STATIC}-two` })).status, 200);
    assert.equal((await request(`${server.url}/plants`, { token: `${STATIC}-three` })).status, 401);
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
    const db = openConnection(join(dir, 'x.db'), { readonly: true });
    try {
      assert.equal(prepare(db, 'SELECT count(*) FROM tokens').pluck().get(), 0);
    } finally {
      db.close();
    }
  });

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

  test('with DATABASE_URL unset, creates ./data/plant-store.db under the working directory, directory included', async () => {
    const dir = tempDir(after);
    const server = await startServer(after, { cwd: dir, env: { DATABASE_URL: undefined, PLANT_STORE_TOKENS: STATIC } });
    assert.ok(existsSync(join(dir, 'data', 'plant-store.db')));
    assert.equal((await request(`${server.url}/plants`, { method: 'POST', token: STATIC, body: '{"id":7,"name":"ivy"}' })).status, 200);
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
  });
});

describe('probes', () => {
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

describe('bad configuration', () => {
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
