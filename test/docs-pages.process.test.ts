import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { tempDir, TOKEN } from './helpers.js';
import { baseEnv, cli, firstToken, request, startServer } from './process.js';
import { freePort, postgresUnavailableReason } from './store/postgres/pg-server.js';
import { needs, until } from './toolkit.js';

/**
 * The guide's pages as a reader follows them, beyond the quick start (test/readme.process.test.ts): the
 * PostgreSQL page's local cluster made by its own commands, the webhooks page's receiver verifying what the
 * service sends to the endpoint the page registers, and the production page's systemd unit checked by
 * systemd-analyze.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

function page(name: string): string {
  return readFileSync(join(ROOT, 'docs', name), 'utf8');
}

/** The fenced block right after the marker comment that starts with `marker`. */
function block(text: string, marker: string): string {
  const found = new RegExp(`^<!-- ${marker}[^\\n]*-->\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\`$`, 'm').exec(text);
  assert.ok(found, `a block marked <!-- ${marker} -->`);
  return found[1]!;
}

const pgSkip = needs("the PostgreSQL page's steps", postgresUnavailableReason());

/** The page's steps, with the port given, as a script in `dir`: bash runs it there with `set -e`. */
function postgresSteps(dir: string, port: string): { script: string; pgBin: string } {
  const steps = block(page('postgresql.md'), 'postgres steps').replaceAll('5433', port);
  writeFileSync(join(dir, 'steps.sh'), `set -e\n${steps}\n`);
  const pgBin = /^PG=(\S+)/m.exec(steps)?.[1];
  assert.ok(pgBin, steps);
  return { script: join(dir, 'steps.sh'), pgBin };
}

/** `command` as the user postgres when `asPostgres`, else as this process's user. */
function runAs(asPostgres: boolean, command: string[], cwd: string) {
  const [file, args] = asPostgres ? ['runuser', ['-u', 'postgres', '--', ...command]] : [command[0]!, command.slice(1)];
  return run(file, args, { cwd, env: baseEnv({}), timeout: 120_000 }).catch((error: Error & { stderr?: string }) => {
    throw new Error(`${command.join(' ')} failed: ${error.message}\n${error.stderr ?? ''}`);
  });
}

/** Stops the cluster in `dir`/pg-data when the test file ends, as the user who runs it. */
function stopAfter(dir: string, pgBin: string, asPostgres: boolean): void {
  after(() => runAs(asPostgres, [join(pgBin, 'pg_ctl'), '-D', join(dir, 'pg-data'), '-m', 'fast', 'stop'], dir).catch(() => undefined));
}

const asRoot = process.getuid?.() === 0;

describe("the PostgreSQL page's local cluster, step by step", { skip: pgSkip, timeout: 180_000 }, () => {
  test(`its commands, run as ${asRoot ? 'root' : 'this user'}, make a cluster the service starts on, and its token command works as printed`, async () => {
    const text = page('postgresql.md');
    const port = String(await freePort());
    // A folder as a checkout is: its owner's, that others may enter (not mkdtemp's 700).
    const dir = tempDir(after);
    chmodSync(dir, 0o755);
    const { script, pgBin } = postgresSteps(dir, port);
    // As root, the steps run the server as postgres (PostgreSQL refuses root), which stops it too.
    stopAfter(dir, pgBin, asRoot);
    await runAs(false, ['bash', script], dir);
    if (asRoot) assert.equal(statSync(join(dir, 'pg-data')).uid, Number((await run('id', ['-u', 'postgres'])).stdout));

    const service = block(text, 'postgres service').replaceAll('5433', port);
    const databaseUrl = /^DATABASE_URL='([^']+)' npm start$/.exec(service)?.[1];
    assert.ok(databaseUrl, service);
    const server = await startServer(after, { env: { DATABASE_URL: databaseUrl } });
    const token = await firstToken(() => server.stderr);
    const created = await request(`${server.url}/plants`, { method: 'POST', token, body: '{"id": 1, "name": "Monstera"}' });
    assert.equal(created.status, 200, created.text);
    // The first start's command, with the password put back as the message asks.
    const printed = /^ {4}DATABASE_URL='(postgres:\/\/plants:\*\*\*@[^']+)' npx plant-store token create/m.exec(server.stderr)?.[1];
    assert.ok(printed, server.stderr);
    const reader = await cli(printed.replace('***', 'secret'), 'token', 'create', '--name', 'reporting', '--scope', 'plants:read');
    assert.equal(reader.code, 0, reader.stderr);
    assert.equal((await request(`${server.url}/plants/1`, { token: reader.stdout.trim() })).status, 200);
    await server.stop();
  });

  test(
    'its commands, run as a user other than root in a folder of theirs, make the same cluster',
    { skip: needs("the PostgreSQL page's steps as a user other than root", !asRoot && 'they run as root, and the first test takes this path') },
    async () => {
      const port = String(await freePort());
      const dir = tempDir(after);
      const { script, pgBin } = postgresSteps(dir, port);
      const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
      chownSync(dir, Number(uid.stdout), Number(gid.stdout));
      chownSync(script, Number(uid.stdout), Number(gid.stdout));
      stopAfter(dir, pgBin, true);
      await runAs(true, ['bash', script], dir);
      // The role and its database, over TCP with the password, as the service connects.
      const { stdout } = await runAs(
        false,
        [join(pgBin, 'psql'), `postgres://plants:secret@127.0.0.1:${port}/plants`, '-Atc', 'SELECT current_user, current_database()'],
        dir,
      );
      assert.equal(stdout.trim(), 'plants|plants');
    },
  );
});

describe("the webhooks page's receiver", { timeout: 120_000 }, () => {
  test('verifies every delivery to the endpoint the page registers (one endpoint, one secret)', async () => {
    const text = page('webhooks.md');
    const quickStart = /^<!-- quick start[^\n]*-->\n```sh\n([\s\S]*?)\n```$/m.exec(text)![1]!;
    // Commands, not their output lines (`# …`) nor their continuations: one of them registers an endpoint.
    const commands = quickStart.split('\n').filter((line) => !line.startsWith('#') && !line.startsWith(' '));
    assert.equal(commands.filter((line) => /webhook add|curl .*\/webhooks\b/.test(line)).length, 1, 'the page registers one endpoint');
    const register = quickStart.split('\n# ')[0]!;

    const dir = tempDir(after);
    const port = String(await freePort());
    const server = await startServer(after, {
      env: { DATABASE_URL: `file:${join(dir, 'plants.db')}`, PLANT_STORE_TOKENS: TOKEN, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
    });
    const { stdout } = await run(
      'bash',
      ['-c', register.replaceAll('http://127.0.0.1:8080', server.url).replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`)],
      {
        env: baseEnv({ TOKEN }),
      },
    );
    const endpoint = JSON.parse(stdout) as { id: string; secret: string; events: string[] };
    assert.match(endpoint.secret, /^whsec_/);

    // The receiver as the page gives it, saved as receiver.mjs beside a node_modules with standardwebhooks.
    const receiverJs = /^A receiver, in ten lines[\s\S]*?```js\n([\s\S]*?)\n```/m.exec(text)![1]!;
    assert.match(receiverJs, /\.listen\(3000\)/);
    writeFileSync(join(dir, 'receiver.mjs'), receiverJs.replace('.listen(3000)', `.listen(${port})`));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    const receiver = spawn(process.execPath, ['receiver.mjs'], {
      cwd: dir,
      env: baseEnv({ PLANT_STORE_WEBHOOK_SECRET: endpoint.secret }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let printed = '';
    receiver.stdout.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
    after(() => receiver.kill('SIGKILL'));
    await until(
      async () => (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' }).catch(() => undefined))?.status === 400,
      'the receiver to listen',
      { timeoutMs: 10_000 },
    );

    for (const body of ['{"id": 1, "name": "Monstera"}', '{"id": 1, "name": "Monstera", "tag": "shade"}'])
      assert.equal((await request(`${server.url}/plants`, { method: 'POST', token: TOKEN, body })).status, 200);
    assert.equal((await request(`${server.url}/plants/1`, { method: 'DELETE', token: TOKEN })).status, 204);
    await until(() => printed.trim().split('\n').length === 3, `the receiver to print the three events (it printed: ${printed})`, {
      timeoutMs: 30_000,
    });
    assert.deepEqual(
      printed
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { type: string }).type),
      ['plant.created', 'plant.updated', 'plant.deleted'],
    );
    // The service records each attempt after the receiver has answered it (together with others, within
    // milliseconds): the log says delivered a moment after the receiver printed.
    const statuses = async () =>
      (JSON.parse((await request(`${server.url}/webhooks/${endpoint.id}/deliveries`, { token: TOKEN })).text) as Array<{ status: string }>).map(
        (d) => d.status,
      );
    await until(async () => (await statuses()).every((status) => status === 'delivered'), 'every delivery to be recorded', { timeoutMs: 10_000 });
    assert.deepEqual(await statuses(), ['delivered', 'delivered', 'delivered']);
  });
});

const systemdAnalyze = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((path) => existsSync(path));
const systemdSkip = needs("the systemd unit's check", systemdAnalyze ? false : 'systemd-analyze is not installed');

describe("the production page's systemd unit", () => {
  test('passes systemd-analyze verify, with nothing to say', { skip: systemdSkip }, async () => {
    let unit = block(page('production.md'), 'systemd unit');
    // The page's node is Debian's; checked with this one where that is not installed.
    if (!existsSync('/usr/bin/node')) unit = unit.replace('ExecStart=/usr/bin/node ', `ExecStart=${process.execPath} `);
    const dir = tempDir(after);
    writeFileSync(join(dir, 'plant-store.service'), `${unit}\n`);
    const { stdout, stderr } = await run(systemdAnalyze!, ['verify', join(dir, 'plant-store.service')]);
    assert.equal(stderr, '');
    assert.equal(stdout, '');
    assert.match(unit, /^ExecStart=\S+ \/srv\/plant-store\/node_modules\/plant-store\/bin\/plant-store\.js serve$/m);
    assert.match(unit, /^Environment=TRUST_PROXY=1$/m);
  });
});
