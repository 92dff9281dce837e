import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { assertFails, cli, CLI_JS, request, run, startServer } from '../process.js';
import { freePort } from '../store/postgres/pg-server.js';
import { becomesRefused } from '../toolkit.js';
import { keyOf, lossyProxy } from './lossy-proxy.js';

/**
 * `plant-store token create|list|revoke --url URL`: the token commands through a running service's API
 * (POST /tokens, GET /tokens, DELETE /tokens/{id}), from a folder where no store is (none is ever opened).
 * Every refusal is the service's message, every failure one line; a create whose answer is lost is asked
 * once more under the same Idempotency-Key, and makes one token.
 */

const STATIC = 'cli-tokens-url-static-0123456789abcdef';
const SECRET = /^ps_[A-Za-z0-9_-]{43}\n$/;

interface Listed {
  id: string;
  name: string;
  scopes: string[];
  createdAt: string;
  revokedAt: string | null;
}

describe('tokens through a running service (--url)', async () => {
  const dir = tempDir(after);
  const databaseUrl = `file:${join(dir, 'server.db')}`;
  const server = await startServer(after, {
    env: { DATABASE_URL: databaseUrl, PLANT_STORE_TOKENS: STATIC, JWT_SECRET: 's'.repeat(32), JWT_ISSUER: 'https://id.example/', JWT_AUDIENCE: 'a' },
  });
  // The CLI runs from a folder of its own without DATABASE_URL: a store opened would be ./data/plant-store.db here.
  const away = tempDir(after);
  after(() => assert.ok(!existsSync(join(away, 'data')), 'no store was opened: no ./data folder made'));
  const tokens = (args: string[], token = STATIC, url = server.url) =>
    run([CLI_JS, 'token', ...args, '--url', url], { cwd: away, env: { PLANT_STORE_TOKEN: token } });
  const made = async (args: string[], token = STATIC): Promise<string> => {
    const created = await tokens(['create', ...args], token);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, SECRET);
    return created.stdout.trim();
  };
  /** The store's own list, read by the CLI on the server's file. */
  const stored = async (): Promise<Listed[]> => JSON.parse((await cli(databaseUrl, 'token', 'list', '--json')).stdout) as Listed[];
  const idOf = async (name: string) => (await stored()).find((token) => token.name === name && token.revokedAt === null)!.id;
  const UNLISTED = `plant-store: not listed: static tokens (PLANT_STORE_TOKENS) and JWTs (its identity provider's), which ${server.url} also accepts; they are not stored there, so they are neither listed nor revoked here\n`;

  test('create prints the secret alone on stdout, and what was made on stderr; the service takes it at once, with its scopes', async () => {
    const created = await tokens(['create', '--name', 'reporting', '--scope', 'plants:read']);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, SECRET);
    const secret = created.stdout.trim();
    const id = await idOf('reporting');
    assert.equal(created.stderr, `created token ${id} "reporting" with plants:read at ${server.url}; it is shown only this once\n`);
    assert.equal((await request(`${server.url}/plants`, { token: secret })).status, 200);
    assert.equal((await request(`${server.url}/plants`, { method: 'POST', token: secret, body: '{"id":1,"name":"x"}' })).status, 403);

    // Without --scope: the plant scopes, as on the store; several scopes repeated or comma-separated.
    await made(['--name', 'plants']);
    await made(['--name', 'watcher', '--scope', 'events:read,plants:read', '--scope', 'events:read']);
    const listed = await stored();
    assert.deepEqual(listed.find((t) => t.name === 'plants')?.scopes, ['plants:read', 'plants:write']);
    assert.deepEqual(listed.find((t) => t.name === 'watcher')?.scopes.sort(), ['events:read', 'plants:read']);
  });

  test('list prints what the store-side list prints, table and JSON; a line on stderr says which tokens are not listed', async () => {
    const json = await tokens(['list', '--json']);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(json.stdout, (await cli(databaseUrl, 'token', 'list', '--json')).stdout);
    assert.equal(json.stderr, UNLISTED);
    const table = await tokens(['list']);
    assert.equal(table.code, 0, table.stderr);
    assert.equal(table.stdout, (await cli(databaseUrl, 'token', 'list')).stdout);
    assert.match(table.stdout, /^ID +NAME +SCOPES +CREATED +STATE\n/);
    assert.equal(table.stderr, UNLISTED);
  });

  test('list follows every page (more than the 1000 of one)', async () => {
    const before = (await stored()).length;
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 101 }, (_, i) =>
          request(`${server.url}/tokens`, {
            method: 'POST',
            token: STATIC,
            body: JSON.stringify({ name: `bulk ${batch * 101 + i}`, scopes: ['plants:read'] }),
          }),
        ),
      );
      assert.ok(answers.every((answer) => answer.status === 201));
    }
    const listed = await tokens(['list', '--json']);
    assert.equal(listed.code, 0, listed.stderr);
    const all = JSON.parse(listed.stdout) as Listed[];
    assert.equal(all.length, before + 1010);
    assert.equal(listed.stdout, (await cli(databaseUrl, 'token', 'list', '--json')).stdout);
  });

  test('revoke by name or by id; the service refuses the token within a second; it stays listed, revoked', async () => {
    const byName = await made(['--name', 'to revoke', '--scope', 'plants:read']);
    const id = await idOf('to revoke');
    const revoked = await tokens(['revoke', 'to revoke']);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.stdout, '');
    assert.equal(revoked.stderr, `revoked token ${id} "to revoke" at ${server.url}; it is refused within a second\n`);
    await becomesRefused(`${server.url}/token`, byName);
    assert.notEqual((await stored()).find((t) => t.id === id)?.revokedAt, null);

    const byId = await made(['--name', 'by id', '--scope', 'plants:read']);
    const other = await idOf('by id');
    const again = await tokens(['revoke', other]);
    assert.equal(again.stderr, `revoked token ${other} "by id" at ${server.url}; it is refused within a second\n`);
    await becomesRefused(`${server.url}/token`, byId);

    // An active token's id wins over another active token's name equal to it.
    const reportingId = await idOf('reporting');
    const decoy = await made(['--name', reportingId, '--scope', 'plants:read']);
    assert.equal(
      (await tokens(['revoke', reportingId])).stderr,
      `revoked token ${reportingId} "reporting" at ${server.url}; it is refused within a second\n`,
    );
    assert.equal((await request(`${server.url}/plants`, { token: decoy })).status, 200, 'the token named like the id is left');
    assert.ok((await stored()).some((t) => t.name === reportingId && t.revokedAt === null));
  });

  test("the service's refusals: 404 unknown or revoked already, 409 a name taken, 403 a scope lacking, 401: one line, exit 1", async () => {
    // Unknown: named as given, id or name, with where to look; nothing is sent to revoke.
    const list = `("plant-store token list --url ${server.url}" lists them)`;
    assertFails(await tokens(['revoke', '0123456789ab']), `no token with the id or name "0123456789ab" at ${server.url} ${list}`);
    assertFails(await tokens(['revoke', 'nobody']), `no token with the id or name "nobody" at ${server.url} ${list}`);
    await made(['--name', 'gone', '--scope', 'plants:read']);
    const gone = await idOf('gone');
    assert.equal((await tokens(['revoke', gone])).code, 0);
    // Revoked: by id or by name, said so, with since when.
    for (const which of [gone, 'gone']) {
      assertFails(
        await tokens(['revoke', which]),
        new RegExp(`^plant-store: token ${gone} "gone" at http://\\S+ is revoked already \\(since \\d{4}-\\S+\\): it is refused there\n$`),
      );
    }
    assertFails(
      await tokens(['revoke', 'static:0a1b2c3d4e5f']),
      /: no stored token with id static:0a1b2c3d4e5f: a static token \(PLANT_STORE_TOKENS\) is configuration, not managed here\n$/,
    );

    await made(['--name', 'taken', '--scope', 'plants:read']);
    const before = (await stored()).length;
    assertFails(await tokens(['create', '--name', 'taken', '--scope', 'plants:read']), 'an active token is already named "taken"');
    assert.equal((await stored()).length, before, 'nothing made');

    const reader = await made(['--name', 'reader', '--scope', 'plants:read']);
    const lacks = 'this token lacks the scope tokens:manage that this operation needs';
    assertFails(await tokens(['list'], reader), lacks);
    assertFails(await tokens(['create', '--name', 'n', '--scope', 'plants:read'], reader), lacks);
    assertFails(await tokens(['revoke', 'taken'], reader), lacks);
    const manager = await made(['--name', 'manager', '--scope', 'tokens:manage,plants:read']);
    assertFails(
      await tokens(['create', '--name', 'more', '--scope', 'plants:read', '--scope', 'webhooks:manage'], manager),
      'body.scopes asks for webhooks:manage, which this token lacks: a token can grant only scopes it holds itself',
    );
    // Without --scope it asks for the plant scopes, both, of which it lacks one.
    assertFails(await tokens(['create', '--name', 'more'], manager), /asks for plants:write, which this token lacks/);
    assert.ok(!(await stored()).some((t) => t.name === 'more'), 'nothing made');

    assertFails(
      await tokens(['list'], 'ps_not-a-token-of-this-service'),
      /^plant-store: .*\(the token in PLANT_STORE_TOKEN, at http:\/\/127\.0\.0\.1:\d+\)\n$/,
    );
  });

  test('the token the CLI is sent with is revoked only with --self (409 otherwise, nothing changed)', async () => {
    const admin = await made(['--name', 'admin', '--scope', 'tokens:manage']);
    const id = await idOf('admin');
    assertFails(
      await tokens(['revoke', 'admin'], admin),
      `token ${id} "admin" is the token this command is sent with (PLANT_STORE_TOKEN): give --self to revoke it all the same; it then stops working within a second`,
    );
    assertFails(await tokens(['revoke', id], admin), new RegExp(`^plant-store: token ${id} "admin" is the token this command is sent with`));
    assert.equal((await request(`${server.url}/tokens`, { token: admin })).status, 200, 'still active');
    // --self is no harm for another token: it revokes that one.
    await made(['--name', 'other', '--scope', 'tokens:manage']);
    assert.equal((await tokens(['revoke', 'other', '--self'], admin)).code, 0);

    const self = await tokens(['revoke', 'admin', '--self'], admin);
    assert.equal(self.code, 0, self.stderr);
    assert.equal(self.stderr, `revoked token ${id} "admin" at ${server.url}; it is refused within a second\n`);
    await becomesRefused(`${server.url}/token`, admin);
  });

  test('an unreachable service, a missing token, --self without --url: one line', async () => {
    const port = await freePort();
    for (const args of [['list'], ['create', '--name', 'n'], ['revoke', 'n']]) {
      // A connection refused reached nothing: nothing to ask again.
      assertFails(
        await tokens(args, STATIC, `http://127.0.0.1:${port}`),
        `cannot reach the service at http://127.0.0.1:${port}: connection refused (ECONNREFUSED)`,
      );
    }
    const tokenless = await run([CLI_JS, 'token', 'list', '--url', server.url], { cwd: away, env: {} });
    assertFails(tokenless, /--url needs a token: set the environment variable PLANT_STORE_TOKEN to a token of the service \(with tokens:manage\)/);
    const env = { PLANT_STORE_URL: server.url, PLANT_STORE_TOKEN: STATIC, DATABASE_URL: 'file:/nonexistent/never.db' };
    const viaEnv = await run([CLI_JS, 'token', 'list', '--json'], { cwd: away, env });
    assert.equal(viaEnv.code, 0, viaEnv.stderr);
    const selfless = await run([CLI_JS, 'token', 'revoke', 'x', '--self'], { cwd: away, env: { DATABASE_URL: databaseUrl } });
    assertFails(selfless, /^plant-store: token revoke: --self is for --url: .*; see "plant-store token revoke --help"\n$/);
  });
});

describe('token create whose answer is lost: asked once more under the same Idempotency-Key, one token made', async () => {
  const dir = tempDir(after);
  const databaseUrl = `file:${join(dir, 'server.db')}`;
  const server = await startServer(after, { env: { DATABASE_URL: databaseUrl, PLANT_STORE_TOKENS: STATIC } });
  const away = tempDir(after);
  const create = (url: string, name: string) =>
    run([CLI_JS, 'token', 'create', '--name', name, '--scope', 'plants:read', '--url', url], { cwd: away, env: { PLANT_STORE_TOKEN: STATIC } });
  const named = async (name: string) =>
    (JSON.parse((await cli(databaseUrl, 'token', 'list', '--json')).stdout) as Listed[]).filter((token) => token.name === name);

  test('the first answer lost: the second request gets it (the same token and secret), and no second token is made', async () => {
    const proxy = await lossyProxy(server.port, (n) => n === 1);
    const created = await create(proxy.url, 'lost once');
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, SECRET);
    const tokens = await named('lost once');
    assert.equal(tokens.length, 1, 'one token made');
    const lines = created.stderr.split('\n');
    assert.match(
      lines[0]!,
      new RegExp(
        `^plant-store: no answer from the service at ${proxy.url}: .*\\((UND_ERR_SOCKET|ECONNRESET|EPIPE)\\); asking once more, with the same Idempotency-Key$`,
      ),
    );
    assert.equal(lines[1], `created token ${tokens[0]!.id} "lost once" with plants:read at ${proxy.url}; it is shown only this once`);
    assert.equal(lines.length, 3);
    assert.equal((await request(`${server.url}/plants`, { token: created.stdout.trim() })).status, 200, 'the secret is the token made');
    assert.equal(proxy.requests.length, 2);
    const [first, second] = proxy.requests.map(keyOf);
    assert.match(first ?? '', /^[0-9a-f-]{36}$/, 'an Idempotency-Key of its own');
    assert.equal(second, first, 'the same key asked again');
  });

  test('list says only the kind of unlisted token the service accepts (static tokens alone here)', async () => {
    const listed = await run([CLI_JS, 'token', 'list', '--url', server.url], { cwd: away, env: { PLANT_STORE_TOKEN: STATIC } });
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(
      listed.stderr,
      `plant-store: not listed: static tokens (PLANT_STORE_TOKENS), which ${server.url} also accepts; they are not stored there, so they are neither listed nor revoked here\n`,
    );
  });

  test('every answer lost: asked twice, then one line says the token may have been made and how to see it; one token at most', async () => {
    const proxy = await lossyProxy(server.port, () => true);
    const created = await create(proxy.url, 'lost twice');
    assert.equal(created.code, 1);
    assert.equal(created.stdout, '');
    const lines = created.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 2, created.stderr);
    assert.match(lines[0]!, /; asking once more, with the same Idempotency-Key$/);
    assert.match(
      lines[1]!,
      new RegExp(
        `^plant-store: no answer from the service at ${proxy.url}: .*, twice: the token may have been made, its secret lost; "plant-store token list --url ${proxy.url}" shows whether it was, and "plant-store token revoke 'lost twice' --url ${proxy.url}" revokes it$`,
      ),
    );
    assert.equal((await named('lost twice')).length, 1, 'made once, not twice');
    // Each CLI call has a key of its own: the next attempt is told the name is taken, and makes nothing.
    const direct = await create(server.url, 'lost twice');
    assertFails(direct, 'an active token is already named "lost twice"');
    assert.notEqual(keyOf(proxy.requests[0]!), undefined);
  });
});
