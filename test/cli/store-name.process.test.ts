import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { CLI_JS, run, type Ran } from '../process.js';
import { postgresUnavailableReason, TestPostgres } from '../store/postgres/pg-server.js';
import { needs } from '../toolkit.js';

/**
 * Every command that writes names the store it wrote to, on stderr: the SQLite file's absolute path, or the
 * PostgreSQL URL without its password. A token made into a leftover ./data/plant-store.db while the server
 * runs on PostgreSQL is then seen at once. stdout stays what it was (the token alone, the JSON).
 */

/** Runs every writing command (and the plant reads) against `env`'s store; `named` is how each must name it. */
async function writesNameTheStore(env: Record<string, string>, cwd: string, named: string, kind: 'sqlite' | 'postgres'): Promise<void> {
  const cli = (args: string[], input?: string): Promise<Ran> =>
    run([CLI_JS, ...args], { cwd, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...env }, input });
  const ok = async (args: string[], stderr: string | RegExp, input?: string): Promise<Ran> => {
    const result = await cli(args, input);
    assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
    if (typeof stderr === 'string') assert.equal(result.stderr, stderr === '' ? '' : `${stderr}\n`, args.join(' '));
    else assert.match(result.stderr, stderr, args.join(' '));
    return result;
  };
  const at = named.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

  await ok(['migrate'], `created the ${kind} store ${named}, with the current schema`);
  await ok(['migrate'], `the schema of the ${kind} store ${named} is up to date`);
  const token = await ok(
    ['token', 'create', '--name', 'ci'],
    new RegExp(`^created token \\S+ "ci" with \\S+ \\S+ in ${at}; it is shown only this once\\n$`),
  );
  assert.match(token.stdout, /^ps_\S+\n$/, 'the token alone on stdout, as before');
  await ok(['token', 'revoke', 'ci'], new RegExp(`^revoked token [0-9a-f]{12} "ci" in ${at}\\n$`));
  const added = await ok(
    ['webhook', 'add', 'http://127.0.0.1:9/hook'],
    new RegExp(`^registered webhook endpoint ep_\\S+ in ${at}; its secret is shown only this once\\n$`),
  );
  const endpoint = (JSON.parse(added.stdout) as { id: string }).id;
  await ok(['webhook', 'remove', endpoint], `removed webhook endpoint ${endpoint} from ${named}`);
  await ok(['plants', 'create', '--id', '1', '--name', 'Fern'], `created plant 1 in ${named}`);
  const replaced = await ok(['plants', 'create', '--id', '1', '--name', 'Fern II', '--tag', 'green'], `replaced plant 1 in ${named}`);
  assert.equal(replaced.stdout, '{\n  "id": 1,\n  "name": "Fern II",\n  "tag": "green"\n}\n');
  await ok(
    ['plants', 'import', '-'],
    `imported 2 plants from ndjson into ${named}: 1 created, 1 replaced`,
    '{"id":9223372036854775807,"name":"Max"}\n{"id":1,"name":"Fern III"}\n',
  );
  const listed = await ok(['plants', 'list'], '');
  assert.equal(listed.stdout, '{"id":1,"name":"Fern III"}\n{"id":9223372036854775807,"name":"Max"}\n');
  const got = await ok(['plants', 'get', '9223372036854775807'], '');
  assert.equal(got.stdout, '{\n  "id": 9223372036854775807,\n  "name": "Max"\n}\n');
  await ok(['plants', 'delete', '1'], `deleted plant 1 from ${named}`);
  await ok(['reindex'], `the search index of ${named} holds every plant (1 plant)`);

  // A refusal names where it looked.
  for (const args of [
    ['plants', 'get', '1'],
    ['plants', 'delete', '1'],
  ]) {
    const missing = await cli(args);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, `plant-store: no plant with id 1 in ${named}\n`);
  }
  const revoked = await cli(['token', 'revoke', 'nobody']);
  assert.equal(revoked.stderr, `plant-store: no active token with id or name "nobody" in ${named}\n`);
}

describe('every write names its store', () => {
  test('SQLite: the absolute path of the file, for a relative DATABASE_URL too (the default ./data/plant-store.db)', async () => {
    const dir = tempDir(after);
    await writesNameTheStore({}, dir, join(dir, 'data', 'plant-store.db'), 'sqlite');
  });

  test('SQLite: restore names the store it replaced', async () => {
    const dir = tempDir(after);
    const file = join(dir, 'p.db');
    const env = { DATABASE_URL: `file:${file}` };
    assert.equal((await run([CLI_JS, 'migrate'], { env })).code, 0);
    assert.equal((await run([CLI_JS, 'backup', join(dir, 'b.db')], { env })).code, 0);
    const restored = await run([CLI_JS, 'restore', join(dir, 'b.db')], { env });
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(restored.stderr, new RegExp(`^restored ${file.replaceAll('.', '\\.')} from `));
  });

  const skip = needs("the CLI's PostgreSQL store name", postgresUnavailableReason());
  test('PostgreSQL: the URL without its password', { skip, timeout: 120_000 }, async () => {
    const postgres = await TestPostgres.start(after);
    const url = new URL(await postgres.createDatabase());
    // The test cluster trusts every connection: a password is accepted, and must never be shown.
    url.password = 'secret-word';
    const shown = new URL(url);
    shown.password = '***';
    await writesNameTheStore({ DATABASE_URL: url.href }, tempDir(after), shown.href.replace('%2A%2A%2A', '***'), 'postgres');
  });
});
