import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { cli, request, startServer } from '../process.js';
import { becomesRefused } from '../toolkit.js';

/** `plant-store token ...` against the database of a running server, as an operator uses it. */

const STATIC = 'cli-test-static-token-0123456789ab';
const SECRET = /^ps_[A-Za-z0-9_-]{40,}$/;

interface ListedToken {
  id: string;
  name: string;
  scopes: string[];
  createdAt: string;
  revokedAt: string | null;
}

async function createToken(databaseUrl: string, ...args: string[]): Promise<string> {
  const created = await cli(databaseUrl, 'token', 'create', ...args);
  assert.equal(created.code, 0, created.stderr);
  return created.stdout.trim();
}

async function listJson(databaseUrl: string): Promise<ListedToken[]> {
  const listed = await cli(databaseUrl, 'token', 'list', '--json');
  assert.equal(listed.code, 0, listed.stderr);
  return JSON.parse(listed.stdout) as ListedToken[];
}

describe('token commands against a running server', async () => {
  // Set up in the suite body rather than in before(): an after() registered from inside a hook runs when that hook ends.
  const databaseUrl = `file:${join(tempDir(after), 'x.db')}`;
  const server = await startServer(after, { env: { DATABASE_URL: databaseUrl, PLANT_STORE_TOKENS: STATIC } });
  after(async () => {
    if (server.running) assert.deepEqual(await server.stop(), { code: 0, signal: null });
  });

  test('create prints the token alone on stdout; the running server accepts it at once, with its scopes only', async () => {
    const created = await cli(databaseUrl, 'token', 'create', '--name', 'ci', '--scope', 'plants:read');
    assert.equal(created.code, 0, created.stderr);
    const lines = created.stdout.split('\n');
    assert.deepEqual(lines.length, 2, 'one line, newline-terminated');
    assert.equal(lines[1], '');
    const token = lines[0]!;
    assert.match(token, SECRET);
    assert.match(created.stderr, /ci/, 'the rest goes to stderr');
    assert.ok(!created.stderr.includes(token), 'the secret is printed once');

    const read = await request(`${server.url}/plants`, { token });
    assert.equal(read.status, 200, read.text);
    const write = await request(`${server.url}/plants`, { method: 'POST', token, body: '{"id":1,"name":"fern"}' });
    assert.equal(write.status, 403, write.text);
    assert.match(write.headers.get('www-authenticate') ?? '', /error="insufficient_scope"/);
    assert.equal(JSON.parse(write.text).error, 403);

    const listed = await cli(databaseUrl, 'token', 'list');
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /\bci\b.*plants:read.*active/);
    assert.ok(!listed.stdout.includes(token) && !listed.stdout.includes(token.slice(3)), 'list never shows a secret');
    const json = await listJson(databaseUrl);
    const record = json.find((t) => t.name === 'ci');
    assert.ok(record);
    assert.deepEqual(record.scopes, ['plants:read']);
    assert.equal(record.revokedAt, null);
    assert.deepEqual(Object.keys(record).sort(), ['createdAt', 'id', 'name', 'revokedAt', 'scopes'], 'no hash, no secret');

    const revoked = await cli(databaseUrl, 'token', 'revoke', 'ci');
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.stdout, '');
    await becomesRefused(`${server.url}/plants`, token);
    const afterRevoke = await listJson(databaseUrl);
    assert.notEqual(afterRevoke.find((t) => t.id === record.id)?.revokedAt, null, 'listed as revoked');
  });

  test('a token without --scope has both scopes; revoke by id refuses it', async () => {
    const token = await createToken(databaseUrl, '--name', 'full');
    assert.equal((await request(`${server.url}/plants`, { method: 'POST', token, body: '{"id":2,"name":"ivy"}' })).status, 200);
    const id = (await listJson(databaseUrl)).find((t) => t.name === 'full' && t.revokedAt === null)?.id;
    assert.ok(id);
    const revoked = await cli(databaseUrl, 'token', 'revoke', id);
    assert.equal(revoked.code, 0, revoked.stderr);
    await becomesRefused(`${server.url}/plants`, token);
    // Revoking again is an error: there is no active token by that id any more.
    const again = await cli(databaseUrl, 'token', 'revoke', id);
    assert.equal(again.code, 1);
    assert.match(again.stderr, new RegExp(id));
  });

  test("revoke takes an active token's id before a token named like it, and revokes that one alone, named", async () => {
    await createToken(databaseUrl, '--name', 'owner', '--scope', 'tokens:manage');
    const target = (await listJson(databaseUrl)).find((t) => t.name === 'owner' && t.revokedAt === null)!;
    await createToken(databaseUrl, '--name', target.id, '--scope', 'plants:read');
    const namesake = (await listJson(databaseUrl)).find((t) => t.name === target.id)!;
    const revoked = await cli(databaseUrl, 'token', 'revoke', target.id);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stderr, new RegExp(`^revoked token ${target.id} "owner" in `));
    const listed = await listJson(databaseUrl);
    assert.notEqual(listed.find((t) => t.id === target.id)?.revokedAt, null);
    assert.equal(listed.find((t) => t.id === namesake.id)?.revokedAt, null, 'the token named like the id is left active');
    // No active token has that id now: its namesake is the one the name finds.
    const second = await cli(databaseUrl, 'token', 'revoke', target.id);
    assert.match(second.stderr, new RegExp(`^revoked token ${namesake.id} "${target.id}" in `));
  });

  test('scopes may be repeated or comma-separated', async () => {
    const token = await createToken(databaseUrl, '--name', 'writer', '--scope', 'plants:write', '--scope', 'plants:read,plants:write');
    assert.deepEqual((await listJson(databaseUrl)).find((t) => t.name === 'writer')?.scopes.sort(), ['plants:read', 'plants:write']);
    assert.equal((await request(`${server.url}/plants`, { method: 'POST', token, body: '{"id":3,"name":"moss"}' })).status, 200);
  });

  test('a second active token with the same name is refused with a clear message; a revoked name can be reused', async () => {
    const first = await createToken(databaseUrl, '--name', 'deploy', '--scope', 'plants:read');
    const duplicate = await cli(databaseUrl, 'token', 'create', '--name', 'deploy', '--scope', 'plants:read');
    assert.equal(duplicate.code, 1);
    assert.equal(duplicate.stdout, '', 'no token printed');
    assert.match(duplicate.stderr, /already named "deploy"/);
    assert.equal(duplicate.stderr.trim().split('\n').length, 1, duplicate.stderr);

    assert.equal((await cli(databaseUrl, 'token', 'revoke', 'deploy')).code, 0);
    const second = await createToken(databaseUrl, '--name', 'deploy', '--scope', 'plants:read');
    assert.notEqual(second, first);
    assert.equal((await request(`${server.url}/plants`, { token: second })).status, 200);
    await becomesRefused(`${server.url}/plants`, first);
  });

  test('revoking a token that does not exist fails naming it', async () => {
    const result = await cli(databaseUrl, 'token', 'revoke', 'no-such-token');
    assert.equal(result.code, 1);
    assert.match(result.stderr, /no-such-token/);
  });
});

describe('token command usage errors exit 1 with one line naming the mistake and the help, and print no token', () => {
  const cases: [string, string[], RegExp][] = [
    ['an unknown scope', ['token', 'create', '--name', 'x', '--scope', 'plants:admin'], /plants:admin/],
    ['a missing --name', ['token', 'create', '--scope', 'plants:read'], /--name/],
    ['--name without a value', ['token', 'create', '--name'], /--name/],
    ['a name with a newline', ['token', 'create', '--name', 'two\nlines'], /--name/],
    [
      'a name with a bidi control',
      ['token', 'create', '--name', 'deploy\u202Egnp.exe'],
      /--name must be 1 to 64 characters, and must not contain .*direction-changing/,
    ],
    ['a name with a non-breaking space', ['token', 'create', '--name', 'initial\u00A0'], /--name .*spaces other than the plain space/],
    ['a name ending in a space', ['token', 'create', '--name', 'initial '], /--name .*a space at either end/],
    ['a name over 64 characters', ['token', 'create', '--name', 'n'.repeat(65)], /--name/],
    ['an unknown option', ['token', 'create', '--name', 'x', '--scopes', 'plants:read'], /--scopes/],
    ['an unknown token command', ['token', 'rotate'], /rotate/],
    ['revoke without a target', ['token', 'revoke'], /ID_OR_NAME is missing/],
    ['an unknown command', ['tokens'], /tokens/],
  ];
  for (const [what, args, message] of cases) {
    test(what, async () => {
      const dir = tempDir(after);
      const result = await cli(`file:${join(dir, 'x.db')}`, ...args);
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, message);
      assert.match(result.stderr, /^plant-store: .*--help/);
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    });
  }

  test('help prints the usage on stdout and exits 0', async () => {
    const result = await cli('file:/nonexistent/never-opened.db', '--help');
    assert.equal(result.code, 0);
    assert.match(result.stdout, /token create --name NAME/);
  });
});

describe('a bad DATABASE_URL', () => {
  test('an unsupported URL is named in a one-line message', async () => {
    const result = await cli('mysql://user:secret@localhost/db', 'token', 'list');
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^plant-store: .*DATABASE_URL/);
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.ok(!result.stderr.includes('secret'), 'the password is not printed');
  });
});
