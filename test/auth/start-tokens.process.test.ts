import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { openConnection, prepare } from '../../src/store/sqlite/connection.js';
import { tempDir } from '../helpers.js';
import { cli, CLI_JS, firstToken, request, run, SERVER_JS, startServer } from '../process.js';
import { until } from '../toolkit.js';

/**
 * At start, what the operator needs to get in: the first token on an empty store (printed once, only its
 * hash stored; none made when tokens are configured); and, once every token is revoked and none is
 * configured, one line saying how to make one, against the DATABASE_URL to use.
 */

const HINT = /^plant-store: no token can call the API .*: make one with DATABASE_URL='(.+)' npx plant-store token create --name <name>$/m;
/** A static token (PLANT_STORE_TOKENS): at least 32 characters. */
const STATIC = 'server-test-static-token-0123456789';
const TOKEN_PATTERN = /ps_[A-Za-z0-9_-]{20,}/g;

function printedTokens(stderr: string): string[] {
  return [...new Set(stderr.match(TOKEN_PATTERN) ?? [])];
}

describe('the first token', () => {
  test('with no token configured and an empty store, prints one token on stderr, stores only its hash', async () => {
    const dir = tempDir(after);
    const databaseUrl = `file:${join(dir, 'x.db')}`;
    const server = await startServer(after, { env: { DATABASE_URL: databaseUrl } });
    await firstToken(() => server.stderr);

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

  test('a start that fails (its port taken) makes no token: the next start prints the first one', async () => {
    const dir = tempDir(after);
    const databaseUrl = `file:${join(dir, 'x.db')}`;
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    after(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const port = String((taken.address() as AddressInfo).port);
    const failed = await run([SERVER_JS], { env: { DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: port }, timeoutMs: 30_000 });
    assert.notEqual(failed.code, 0, `the start failed: ${failed.stderr}`);
    assert.deepEqual(printedTokens(failed.stderr), [], `no token printed by a start that failed: ${failed.stderr}`);
    const server = await startServer(after, { env: { DATABASE_URL: databaseUrl } });
    const token = await firstToken(() => server.stderr);
    assert.equal((await request(`${server.url}/plants`, { token })).status, 200);
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
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
});

describe('start-up and tokens', async () => {
  const dir = tempDir(after);
  // Relative, as by default: the line must give the path a command run from anywhere can use.
  const databaseUrl = 'file:./tokens.db';

  test('the first start prints the first token and no warning; after every token is revoked a restart says how to make one', async () => {
    const first = await startServer(after, { cwd: dir, env: { DATABASE_URL: databaseUrl } });
    const token = await firstToken(() => first.stderr);
    assert.match(first.stderr, /Created the first access token/);
    assert.doesNotMatch(first.stderr, HINT);
    assert.equal((await request(`${first.url}/plants`, { token })).status, 200);
    // The command it gives for more tokens names the server's store, and works as printed from anywhere.
    const absolute = `file:${join(dir, 'tokens.db')}`;
    const command = /^ {4}DATABASE_URL='(.+)' npx plant-store token create --name <name> --scope plants:read$/m.exec(first.stderr);
    assert.ok(command, first.stderr);
    assert.equal(command[1], absolute);
    const reader = await cli(command[1], 'token', 'create', '--name', 'reader', '--scope', 'plants:read');
    assert.equal(reader.code, 0, reader.stderr);
    assert.equal((await request(`${first.url}/plants`, { token: reader.stdout.trim() })).status, 200);
    // Its first form goes through the running server, from a folder with no store (PORT=0 here: the port is a placeholder).
    const through = /^ {4}PLANT_STORE_TOKEN=(ps_\S+) npx plant-store token create --url (\S+) --name <name> --scope plants:read$/m.exec(first.stderr);
    assert.ok(through, first.stderr);
    assert.equal(through[1], token);
    assert.equal(through[2], 'http://127.0.0.1:<port>');
    const url = through[2].replace('<port>', new URL(first.url).port);
    const away = tempDir(after);
    const writer = await run([CLI_JS, 'token', 'create', '--url', url, '--name', 'writer', '--scope', 'plants:write'], {
      cwd: away,
      env: { PLANT_STORE_TOKEN: through[1] },
    });
    assert.equal(writer.code, 0, writer.stderr);
    assert.equal((await request(`${first.url}/plants/1`, { method: 'DELETE', token: writer.stdout.trim() })).status, 404, 'taken: no such plant');
    await first.stop();

    assert.equal((await cli(absolute, 'token', 'revoke', 'initial')).code, 0);
    assert.equal((await cli(absolute, 'token', 'revoke', 'reader')).code, 0);
    assert.equal((await cli(absolute, 'token', 'revoke', 'writer')).code, 0);
    const second = await startServer(after, { cwd: dir, env: { DATABASE_URL: databaseUrl } });
    // Waited for, as the first token is (firstToken): stderr and the log that says the server listens are two pipes.
    const hint = await until(() => HINT.exec(second.stderr), 'the line saying how to make a token');
    assert.equal(hint[1], absolute, 'the store by its absolute path');
    assert.equal(second.stderr.match(/no token can call/g)?.length, 1, 'one line');
    assert.doesNotMatch(second.stderr, /Created the first access token/, 'a revoked store gets no new full-access token');
    await second.stop();

    // The line's command works as printed, and then the warning is gone.
    const made = await cli(hint[1], 'token', 'create', '--name', 'again');
    assert.equal(made.code, 0, made.stderr);
    const third = await startServer(after, { cwd: dir, env: { DATABASE_URL: databaseUrl } });
    assert.doesNotMatch(third.stderr, HINT);
    assert.equal((await request(`${third.url}/plants`, { token: made.stdout.trim() })).status, 200);
    await third.stop();
  });

  test('no warning when a static token or a JWT key is configured', async () => {
    const url = `file:${join(dir, 'revoked.db')}`;
    assert.equal((await cli(url, 'migrate')).code, 0);
    for (const env of [
      { PLANT_STORE_TOKENS: 'static-token-0123456789abcdefghijklmnop' },
      { JWT_SECRET: 's'.repeat(32), JWT_ISSUER: 'i', JWT_AUDIENCE: 'a' },
    ]) {
      const server = await startServer(after, { env: { DATABASE_URL: url, ...env } });
      assert.doesNotMatch(server.stderr, /no token can call/);
      await server.stop();
    }
  });
});
