import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { tempDir } from '../helpers.js';
import { cli, request, run, SERVER_JS, startServer, type Ran } from '../process.js';
import { dirState, integrity, plantsIn, withHiddenTrigger } from '../store/sqlite/backup/files.js';
import { until } from '../toolkit.js';

/** `plant-store backup FILE` and `plant-store restore FILE`, as an operator runs them beside a server. */

const TOKEN = 'cli-backup-token-0123456789abcdefgh';

/** One line on stderr, never a stack trace, nothing on stdout. */
function oneLine(ran: Ran, code: number, pattern: RegExp): void {
  assert.equal(ran.code, code, ran.stderr);
  assert.equal(ran.stdout, '');
  assert.equal(ran.stderr.trimEnd().split('\n').length, 1, ran.stderr);
  assert.ok(!/\n\s+at /.test(ran.stderr), ran.stderr);
  assert.match(ran.stderr, pattern);
}

/** Clients writing plants as fast as the server takes them, until stopped; what was acknowledged, id to name. */
function writeLoad(url: string, clients: number) {
  const acknowledged = new Map<string, string>();
  let next = 1000;
  let stopped = false;
  const client = async () => {
    while (!stopped) {
      const id = next++;
      const res = await request(`${url}/plants/${id}`, { method: 'PUT', token: TOKEN, body: JSON.stringify({ name: `plant ${id}` }) });
      if (res.status === 201) acknowledged.set(String(id), `plant ${id}`);
    }
  };
  const running = Array.from({ length: clients }, client);
  return {
    acknowledged,
    stop: async () => {
      stopped = true;
      await Promise.all(running);
    },
  };
}

describe('backup and restore beside a running server', async () => {
  const dir = tempDir(after);
  const storeDir = join(dir, 'data');
  const databaseUrl = `file:${join(storeDir, 'plants.db')}`;
  const env = { DATABASE_URL: databaseUrl, PLANT_STORE_TOKENS: TOKEN };
  let server = await startServer(after, { env });
  const copy = join(dir, 'copy.db');
  let before = new Map<string, string>();

  test('backup while the server takes writes: the copy holds every plant acknowledged before it began, and is consistent', async () => {
    const load = writeLoad(server.url, 8);
    await until(() => load.acknowledged.size >= 200, 'writes to be acknowledged', { timeoutMs: 30_000 });
    before = new Map(load.acknowledged);
    const backup = await cli(databaseUrl, 'backup', copy);
    const during = load.acknowledged.size - before.size;
    await load.stop();
    oneLine(backup, 0, /^backed up .*plants\.db to .*copy\.db: \d+ plants, \d+\.\d MiB, integrity checked, in \d+\.\d s\n$/);
    assert.ok(during > 0, 'writes went on during the backup');
    const copied = plantsIn(copy);
    for (const [id, name] of before) assert.equal(copied.get(id), name, `plant ${id}`);
    for (const [id, name] of copied) assert.equal(load.acknowledged.get(id), name, `plant ${id} was written`);
    assert.equal(integrity(copy), 'ok');
    assert.equal(Number(/: (\d+) plants/.exec(backup.stderr)![1]), copied.size);
  });

  test('restore is refused while the server has the store open, and nothing changes', async () => {
    const files = readdirSync(storeDir).sort();
    const refused = await cli(databaseUrl, 'restore', copy);
    oneLine(
      refused,
      1,
      /^plant-store: the store .*plants\.db is open in another process \(a running server, or a plant-store command\): stop it, then restore; nothing was replaced\n$/,
    );
    assert.deepEqual(readdirSync(storeDir).sort(), files, 'no file kept aside, none left half-made');
    assert.equal((await request(`${server.url}/plants/1000`, { token: TOKEN })).status, 200, 'the server serves on');
  });

  test('stopped, the store is restored, and a started server serves the backup', async () => {
    await request(`${server.url}/plants/1`, { method: 'PUT', token: TOKEN, body: '{"name":"written after the backup"}' });
    assert.equal((await server.stop()).code, 0);
    const restored = await cli(databaseUrl, 'restore', copy);
    oneLine(
      restored,
      0,
      new RegExp(
        `^restored .*plants\\.db from .*copy\\.db: \\d+ plants, schema version ${SQLITE_MIGRATIONS.length}; the replaced store is kept at .*plants\\.db\\.replaced-\\d{8}T\\d{6}Z\\n$`,
      ),
    );
    const kept = /kept at (\S+)\n$/.exec(restored.stderr)![1]!;
    assert.equal(plantsIn(kept).get('1'), 'written after the backup', 'the replaced store, kept whole');
    assert.deepEqual(readdirSync(storeDir).sort(), ['plants.db', kept.split('/').at(-1)].sort());

    server = await startServer(after, { env });
    for (const id of [...before.keys()].slice(0, 50)) {
      assert.equal((await request(`${server.url}/plants/${id}`, { token: TOKEN })).text, `{"id":${id},"name":"plant ${id}"}`);
    }
    assert.equal((await request(`${server.url}/plants/1`, { token: TOKEN })).status, 404, 'a plant written after the backup is not in it');
    const count = await request(`${server.url}/plants?limit=1`, { token: TOKEN, headers: { prefer: 'count=exact' } });
    assert.equal(Number(count.headers.get('x-total-count')), plantsIn(copy).size);
  });
});

test('every refusal is one line and exit 1, bad arguments too (pointing at the help), and nothing is replaced', async () => {
  const dir = tempDir(after);
  const storeDir = join(dir, 'data');
  mkdirSync(storeDir);
  const databaseUrl = `file:${join(storeDir, 'plants.db')}`;
  assert.equal((await cli(databaseUrl, 'migrate')).code, 0);
  const backup = join(dir, 'good.db');
  oneLine(await cli(databaseUrl, 'backup', backup), 0, /^backed up/);
  oneLine(await cli(databaseUrl, 'backup', backup), 1, /^plant-store: .*good\.db exists already: name a new file, or add --force to replace it\n$/);
  oneLine(await cli(databaseUrl, 'backup', backup, '--force'), 0, /^backed up/);
  oneLine(await cli(databaseUrl, 'backup', join(dir, 'missing', 'x.db')), 1, /^plant-store: the directory .*missing does not exist\n$/);
  // A folder, with --force or without: said before any copy (once an EISDIR after a whole copy).
  for (const force of [[], ['--force']]) {
    oneLine(
      await cli(databaseUrl, 'backup', storeDir, ...force),
      1,
      /^plant-store: .*data is a folder: name the backup's file \(.*plant-store\.db, say\)\n$/,
    );
  }
  oneLine(await cli(databaseUrl, 'backup', join(storeDir, 'plants.db')), 1, /^plant-store: .*plants\.db exists already/);
  oneLine(
    await cli(databaseUrl, 'backup', join(storeDir, 'plants.db'), '--force'),
    1,
    /^plant-store: .*plants\.db is the store itself: name another file\n$/,
  );
  oneLine(
    await cli(`file:${join(dir, 'absent.db')}`, 'backup', join(dir, 'y.db')),
    1,
    /^plant-store: there is no SQLite store at .*absent\.db to back up\n$/,
  );
  assert.ok(!existsSync(join(dir, 'absent.db')), 'backup never creates a store');

  writeFileSync(join(dir, 'empty.db'), '');
  writeFileSync(join(dir, 'text.db'), 'id,name\n1,fern\n'.repeat(400));
  copyFileSync(backup, join(dir, 'truncated.db'));
  truncateSync(join(dir, 'truncated.db'), readFileSync(backup).length - 1000);
  const state = dirState(storeDir);
  for (const [name, reason] of [
    ['empty.db', 'it is empty'],
    ['text.db', 'it is not an SQLite database'],
    ['truncated.db', 'it is cut short'],
    ['missing.db', 'there is no such file'],
  ]) {
    oneLine(
      await cli(databaseUrl, 'restore', join(dir, name!)),
      1,
      new RegExp(`^plant-store: cannot restore from .*${name}: ${reason}.*; nothing was replaced\\n$`),
    );
    assert.deepEqual(dirState(storeDir), state, name);
  }

  for (const command of ['backup', 'restore']) {
    oneLine(
      await cli('postgres://plants:secret@db.invalid/plants', command, backup),
      1,
      new RegExp(`^plant-store: ${command} is for the SQLite store; DATABASE_URL names PostgreSQL: use pg_dump and pg_restore, or pg_basebackup`),
    );
  }
  oneLine(await cli('nonsense', 'backup', backup), 1, /^plant-store: bad configuration: DATABASE_URL: /);
  for (const args of [['backup'], ['backup', 'a.db', 'b.db'], ['backup', '--nope', 'a.db'], ['restore'], ['restore', 'a.db', '--force']]) {
    oneLine(await cli(databaseUrl, ...args), 1, new RegExp(`^plant-store: ${args[0]}: .*; see "plant-store ${args[0]} --help"\\n$`));
  }
  const help = await cli(databaseUrl, 'help');
  assert.match(help.stdout, /\n {2}backup FILE \[--force\] {2,}copy the SQLite store/);
  assert.match(help.stdout, /\n {2}restore FILE {2,}replace the SQLite store by the backup FILE/);
});

test("a backup with a trigger hidden under SQLite's prefix is refused by restore, naming it; copied into place, by every command and the server", async () => {
  const dir = tempDir(after);
  const storeDir = join(dir, 'data');
  mkdirSync(storeDir);
  const store = join(storeDir, 'plants.db');
  const databaseUrl = `file:${store}`;
  assert.equal((await cli(databaseUrl, 'migrate')).code, 0);
  assert.equal((await cli(databaseUrl, 'token', 'create', '--name', 'ci')).code, 0);
  const backup = join(dir, 'backup.db');
  oneLine(await cli(databaseUrl, 'backup', backup), 0, /^backed up/);
  // The security review's backup: a trigger that takes back every revocation, renamed sqlite_keep in the file's bytes.
  const tampered = withHiddenTrigger(backup, join(dir, 'tampered.db'));
  const state = dirState(storeDir);
  const hidden = 'has a trigger sqlite_keep, a name SQLite keeps for its own objects \\(sqlite_…\\), but SQLite makes no such trigger';
  oneLine(
    await cli(databaseUrl, 'restore', tampered),
    1,
    new RegExp(`^plant-store: cannot restore from .*tampered\\.db: it ${hidden}; nothing was replaced\\n$`),
  );
  assert.deepEqual(dirState(storeDir), state, 'nothing replaced');

  // Copied into place by hand, past restore: no command and no server opens it.
  copyFileSync(tampered, store);
  const refused = new RegExp(`DATABASE_URL: cannot open file:.*plants\\.db: the file ${hidden}: it was altered outside plant-store`);
  oneLine(await cli(databaseUrl, 'token', 'revoke', 'ci'), 1, refused);
  oneLine(await cli(databaseUrl, 'backup', join(dir, 'again.db')), 1, /sqlite_keep/);
  const server = await run([SERVER_JS], { env: { DATABASE_URL: databaseUrl, PORT: '0' } });
  assert.equal(server.code, 1, server.stderr);
  assert.match(server.stderr, refused);
});
