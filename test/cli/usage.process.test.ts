import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { baseEnv, cli, CLI_JS, run, withoutProgress, type Ran } from '../process.js';

/** The first hour with the CLI: help per command, a version, one clear line for every mistake, never a stack trace. */

const VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const NO_STORE = 'file:/nonexistent/never-opened.db';

/** A failure as the CLI must report it: exit 1, nothing on stdout, one line on stderr, no stack trace. */
function assertOneLine(result: Ran, message?: RegExp): void {
  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.stdout, '');
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  assert.match(result.stderr, /^plant-store: /);
  assert.doesNotMatch(result.stderr, /\n\s+at |Error:|node:internal/, 'no stack trace');
  if (message) assert.match(result.stderr, message);
}

/** Every command and action the tool's help lists: "token create", "migrate"… */
function listed(help: string): string[] {
  const section = /Commands:\n([\s\S]*?)\n\n/.exec(help)![1]!;
  return [
    ...new Set(
      section
        .split('\n')
        .filter((line) => /^ {2}\S/.test(line))
        // The first column: the command, its action, then its arguments and options (upper case or dashed).
        .map((line) =>
          line
            .trim()
            .split(/ {2,}/)[0]!
            .split(' ')
            .filter((word) => /^[a-z]+$/.test(word))
            .join(' '),
        ),
    ),
  ];
}

describe('help and version', async () => {
  const toolHelp = await cli(NO_STORE, '--help');
  const commands = listed(toolHelp.stdout);

  test('--version and -v print the version of package.json', async () => {
    for (const flag of ['--version', '-v']) {
      const result = await cli(NO_STORE, flag);
      assert.equal(result.code, 0);
      assert.equal(result.stdout, `${VERSION}\n`);
      assert.equal(result.stderr, '');
    }
  });

  test('--help, -h and help print the whole usage on stdout, every command listed', async () => {
    assert.equal(toolHelp.code, 0);
    assert.match(toolHelp.stdout, /^Usage: plant-store <command>/);
    assert.deepEqual(commands, [
      'serve',
      'token create',
      'token list',
      'token revoke',
      'webhook add',
      'webhook list',
      'webhook remove',
      'webhook deliveries',
      'plants create',
      'plants get',
      'plants list',
      'plants delete',
      'plants import',
      'plants export',
      'events tail',
      'backup',
      'restore',
      'migrate',
      'reindex',
    ]);
    for (const flag of ['-h', 'help']) assert.equal((await cli(NO_STORE, flag)).stdout, toolHelp.stdout);
  });

  test('every command and action has its own help: --help or -h prints its usage only, on stdout, exit 0', async () => {
    for (const path of commands) {
      const words = path.split(' ');
      // Each process takes a while on a busy machine: -h for the actions of token, --help for the others.
      for (const flag of [words[0] === 'token' ? '-h' : '--help']) {
        const result = await cli(NO_STORE, ...words, flag);
        assert.equal(result.code, 0, `${path} ${flag}: ${result.stderr}`);
        assert.equal(result.stderr, '');
        assert.ok(result.stdout.startsWith(`Usage: plant-store ${path}`), `${path} ${flag}: ${result.stdout}`);
        // Its own usage only: no other command's.
        for (const other of commands.filter((c) => c !== path)) assert.ok(!result.stdout.includes(`plant-store ${other} `), `${path} shows ${other}`);
        assert.match(result.stdout, /-h, --help/);
      }
    }
    // Help wins wherever it is, even after other options and arguments, and opens no store.
    assert.equal((await cli(NO_STORE, 'webhook', 'deliveries', 'ep_x', '--json', '--help')).code, 0);
    assert.equal((await cli(NO_STORE, 'help', 'token', 'create')).stdout, (await cli(NO_STORE, 'token', 'create', '--help')).stdout);
  });

  test('a command with actions, given none, prints its own help: asked for on stdout (exit 0), forgotten on stderr (exit 1)', async () => {
    for (const command of ['token', 'webhook', 'plants']) {
      const forgotten = await cli(NO_STORE, command);
      assert.equal(forgotten.code, 1);
      assert.equal(forgotten.stdout, '');
      assert.ok(forgotten.stderr.startsWith(`Usage: plant-store ${command} <`), forgotten.stderr);
      const asked = await cli(NO_STORE, command, '--help');
      assert.equal(asked.code, 0);
      assert.equal(asked.stdout, forgotten.stderr);
    }
    const bare = await cli(NO_STORE);
    assert.equal(bare.code, 1);
    assert.equal(bare.stderr, toolHelp.stdout);
  });

  test('the help says which store the commands use, resolved to its file', async () => {
    const dir = tempDir(after);
    const result = await run([CLI_JS, 'token', 'list', '--help'], { cwd: dir, env: {} });
    assert.match(
      result.stdout,
      new RegExp(`DATABASE_URL=file:\\./data/plant-store\\.db \\(${join(dir, 'data', 'plant-store.db').replace(/[.]/g, '\\.')}\\)`),
    );
  });
});

describe('mistakes of use: exit 1, one line naming the mistake and the help', () => {
  const cases: Array<[string, string[], RegExp]> = [
    [
      'an unknown command, with the one meant',
      ['tokens'],
      /unknown command "tokens": did you mean "token"\? the commands are serve, token, webhook, plants, events, backup, restore, migrate, reindex/,
    ],
    ['an unknown action, with the one meant', ['token', 'craete'], /unknown token command "craete": did you mean "create"\?/],
    [
      'an unknown option, with the one meant',
      ['token', 'create', '--name', 'x', '--scopes', 'plants:read'],
      /token create: unknown option --scopes \(did you mean --scope\?\); see "plant-store token create --help"/,
    ],
    ['an unknown short option', ['token', 'list', '-x'], /token list: unknown option -x/],
    ['a missing option value', ['token', 'create', '--name'], /--name needs a value/],
    ['an option value that looks like an option', ['token', 'create', '--name', '--scope', 'plants:read'], /--name needs a value/],
    ['a missing required option', ['token', 'create'], /--name NAME is required/],
    ['a missing argument', ['webhook', 'remove'], /webhook remove: ID is missing/],
    ['an argument too many', ['token', 'list', 'extra'], /unexpected argument "extra"/],
    ['a value not among the choices', ['plants', 'export', '--format', 'xml'], /--format must be ndjson or csv, got "xml"/],
    ['a flag given a value', ['token', 'list', '--json=yes'], /--json takes no value/],
    ['an option given twice', ['plants', 'export', '--format', 'csv', '--format', 'ndjson'], /--format is given twice/],
    ['a bad limit', ['webhook', 'deliveries', 'ep_x', '--limit', '1e3'], /--limit must be a whole number from 1 to 1000/],
  ];
  for (const [what, args, message] of cases) {
    test(what, async () => assertOneLine(await cli(NO_STORE, ...args), message));
  }
});

describe('store commands refuse a store that does not exist, naming where they looked', () => {
  test('a relative DATABASE_URL run from another folder: the resolved path and DATABASE_URL named, nothing created', async () => {
    const dir = tempDir(after);
    for (const args of [
      ['token', 'create', '--name', 'ci'],
      ['token', 'list'],
      ['token', 'revoke', 'ci'],
      ['webhook', 'list'],
      ['webhook', 'deliveries', 'ep_x'],
      ['plants', 'export'],
      ['plants', 'list'],
      ['plants', 'create', '--id', '1', '--name', 'Fern'],
    ]) {
      const result = await run([CLI_JS, ...args], { cwd: dir, env: {} });
      assertOneLine(result, /no store at \S+\/data\/plant-store\.db \(DATABASE_URL=file:\.\/data\/plant-store\.db, the default, relative to /);
      assert.ok(result.stderr.includes(join(dir, 'data', 'plant-store.db')), result.stderr);
      assert.match(result.stderr, /plant-store migrate/);
    }
    const explicit = await run([CLI_JS, 'token', 'list'], { cwd: dir, env: { DATABASE_URL: 'file:elsewhere.db' } });
    assertOneLine(explicit, new RegExp(`no store at ${join(dir, 'elsewhere.db')} \\(DATABASE_URL=file:elsewhere\\.db, relative to`));
    assert.ok(!existsSync(join(dir, 'data')), 'no folder made');
    assert.ok(!existsSync(join(dir, 'elsewhere.db')), 'no store made');
  });

  test('migrate makes the store; the other commands then use it', async () => {
    const dir = tempDir(after);
    const url = `file:${join(dir, 'made', 'p.db')}`;
    assert.equal((await cli(url, 'migrate')).code, 0);
    const created = await cli(url, 'token', 'create', '--name', 'ci');
    assert.equal(created.code, 0, created.stderr);
  });
});

describe('plants import: files, standard input and formats, without a stack trace', async () => {
  const dir = tempDir(after);
  const url = `file:${join(dir, 'p.db')}`;
  await cli(url, 'migrate');

  test('a file that cannot be read is one line naming it', async () => {
    assertOneLine(await cli(url, 'plants', 'import', join(dir, 'nonexistent.ndjson')), /cannot read \S+nonexistent\.ndjson: no such file/);
    assertOneLine(await cli(url, 'plants', 'import', dir), /cannot read \S+: it is a folder/);
    mkdirSync(join(dir, 'sub'));
    assertOneLine(await cli(url, 'plants', 'import', join(dir, 'sub', 'x', 'y.csv')), /cannot read .*: no such file/);
  });

  test('a JSON array on standard input is recognized by itself; so are NDJSON and CSV', async () => {
    const inputs: Array<[string, string, string]> = [
      ['json', '  \n[{"id":1,"name":"Fern"},{"id":2,"name":"Moss"}]', '{"created":2,"replaced":0}'],
      ['ndjson', '{"id":3,"name":"Ivy"}\n', '{"created":1,"replaced":0}'],
      ['csv', 'id,name,tag\r\n4,"Palm, tall",\r\n1,Fern II,green\r\n', '{"created":1,"replaced":1}'],
    ];
    for (const [format, input, counts] of inputs) {
      const result = await run([CLI_JS, 'plants', 'import', '-'], { env: { DATABASE_URL: url }, input });
      assert.equal(result.code, 0, `${format}: ${result.stderr}`);
      assert.deepEqual(JSON.parse(result.stdout), JSON.parse(counts));
      assert.match(result.stderr, new RegExp(`from ${format} into `));
    }
    const exported = await cli(url, 'plants', 'export', '--format', 'csv');
    assert.equal(exported.stdout, 'id,name,tag\r\n1,Fern II,green\r\n2,Moss,\r\n3,Ivy,\r\n4,"Palm, tall",\r\n');
  });

  test('a CSV file exported by the CLI imports again, the same plants; --format csv is taken as said', async () => {
    const file = join(dir, 'all.csv');
    writeFileSync(file, (await cli(url, 'plants', 'export', '--format', 'csv')).stdout);
    const again = await cli(url, 'plants', 'import', file, '--format', 'csv');
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), { created: 0, replaced: 4 });
  });

  test('counts in words: 1 plant, 2 plants', async () => {
    const one = withoutProgress(await run([CLI_JS, 'plants', 'import', '-'], { env: { DATABASE_URL: url }, input: '{"id":10,"name":"one"}' }));
    assert.equal(one.stderr, `imported 1 plant from ndjson into ${join(dir, 'p.db')}: 1 created, 0 replaced\n`);
    const two = await run([CLI_JS, 'plants', 'import', '-'], { env: { DATABASE_URL: url }, input: '{"id":11,"name":"a"}\n{"id":12,"name":"b"}' });
    assert.match(two.stderr, /imported 2 plants from ndjson/);
  });

  test('a bad row is one line naming it; nothing stored', async () => {
    const result = await run([CLI_JS, 'plants', 'import', '-'], { env: { DATABASE_URL: url }, input: 'id,name,tag\r\n20,ok,\r\n21,,\r\n' });
    assertOneLine(result, /nothing imported: line 3: name must not be empty/);
  });

  test('an export cut short by its reader (| head) ends quietly', async () => {
    await run([CLI_JS, 'plants', 'import', '-'], {
      env: { DATABASE_URL: url },
      input: Array.from({ length: 50_000 }, (_, i) => `{"id":${1000 + i},"name":"plant ${i} ${'x'.repeat(40)}"}`).join('\n'),
    });
    const child = spawn(process.execPath, [CLI_JS, 'plants', 'export'], { env: baseEnv({ DATABASE_URL: url }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    assert.equal(stderr, '');
    assert.equal(code, 0);
  });
});
