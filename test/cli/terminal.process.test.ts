import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createToken } from '../../src/auth/tokens.js';
import { FEED_START_ID } from '../../src/store/event-store.js';
import { registerEndpoint } from '../../src/webhooks/endpoints.js';
import { openSqlite, tempDir } from '../helpers.js';
import { baseEnv, CLI_JS, run, type Ran } from '../process.js';
import { until } from '../toolkit.js';

/**
 * Stored text that anyone with plants:write (or a webhook's or token's maker) chose, printed by every command
 * that shows it: on a terminal its control characters come escaped, to a pipe or a file its exact bytes.
 * The CLI's output goes to pipes here; a module loaded first (--import) makes the CLI take its stdout and
 * stderr for terminals, as a shell's would be.
 */

const AS_TERMINAL = ['--import', 'data:text/javascript,process.stdout.isTTY=true;process.stderr.isTTY=true'];
/** Erase the line, back to its start, red, a C1 CSI (U+009B), a bell and DEL. */
const HOSTILE = 'Fern\u001b[2K\rOK \u001b[31mred\u009b1m\u0007\u007f';

/** Controls other than the line ends a command writes itself (LF, CRLF). */
function controls(text: string): string[] {
  return [...text.replaceAll('\r\n', '\n').matchAll(/(?!\n)\p{Cc}/gu)].map((m) => m[0]);
}

describe('stored text on a terminal and to a pipe', async () => {
  const dir = tempDir(after);
  const databaseUrl = `file:${join(dir, 'plants.db')}`;
  // The store as clients left it: a plant, a token, a webhook endpoint and a failed delivery, each with control characters.
  const store = openSqlite(dir);
  await store.plants.put({ id: 1, name: HOSTILE, tag: '\u001b[0m' });
  await createToken(store.tokens, HOSTILE, ['plants:read']);
  const { endpoint } = await registerEndpoint(
    store.webhooks,
    { url: 'http://127.0.0.1:9/hook', description: HOSTILE, events: ['plant.created'] },
    { allowPrivateNetworks: true },
  );
  await store.plants.put({ id: 2, name: 'queued' });
  const [due] = await store.webhooks.claimDue(10, 60_000);
  assert.ok(due, 'a message for the endpoint');
  await store.webhooks.recordAttempts(
    [{ seq: due.seq, endpointId: endpoint.id, at: Date.now(), status: 500, error: HOSTILE, outcome: 'retry', nextAttemptAt: Date.now() + 60_000 }],
    86_400_000,
  );
  await store.close();

  const cli = (terminal: boolean, ...args: string[]): Promise<Ran> =>
    run([...(terminal ? AS_TERMINAL : []), CLI_JS, ...args], { env: { DATABASE_URL: databaseUrl } });

  const commands: string[][] = [
    ['plants', 'export', '--format', 'csv'],
    ['plants', 'export'],
    ['plants', 'list'],
    ['plants', 'list', '--format', 'ndjson'],
    ['plants', 'get', '1'],
    ['token', 'list'],
    ['token', 'list', '--json'],
    ['webhook', 'list', '--json'],
    ['webhook', 'deliveries', endpoint.id],
    ['webhook', 'deliveries', endpoint.id, '--json'],
  ];

  test('on a terminal every command shows the controls escaped (\\x1b, \\r, \\u009b), and nothing else changes', async () => {
    for (const args of commands) {
      const shown = await cli(true, ...args);
      assert.equal(shown.code, 0, `${args.join(' ')}: ${shown.stderr}`);
      assert.deepEqual(controls(shown.stdout), [], `${args.join(' ')}: ${JSON.stringify(shown.stdout)}`);
      // The text is there, in a visible form: \x1b or JSON's \u001b, and \u009b for the C1 CSI.
      assert.match(shown.stdout, /(\\x1b|\\u001b)\[2K\\rOK /, args.join(' '));
      assert.match(shown.stdout, /\\u009b1m/, args.join(' '));
    }
    const table = await cli(true, 'plants', 'list');
    const name = 'Fern\\x1b[2K\\rOK \\x1b[31mred\\u009b1m\\x07\\x7f';
    assert.equal(table.stdout, `ID  ${'NAME'.padEnd(name.length)}  TAG\n1   ${name}  \\x1b[0m\n2   queued\n`);
  });

  test('to a pipe the exact bytes, as stored', async () => {
    for (const args of commands) {
      const exact = await cli(false, ...args);
      assert.equal(exact.code, 0, `${args.join(' ')}: ${exact.stderr}`);
      // JSON escapes C0 itself (\u001b, \r), but C1 and DEL go as they are; text formats carry every byte.
      assert.ok(exact.stdout.includes('\u009b1m'), args.join(' '));
    }
    const csv = await cli(false, 'plants', 'export', '--format', 'csv');
    assert.equal(csv.stdout, `id,name,tag\r\n1,"${HOSTILE}",\u001b[0m\r\n2,queued,\r\n`);
  });

  test('messages on stderr that quote stored or given text are escaped on a terminal', async () => {
    const refused = await cli(true, 'token', 'revoke', 'no\u001b[2Kone');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^plant-store: no active token with id or name "no\\x1b\[2Kone" in /);
    assert.deepEqual(controls(refused.stderr), []);
  });

  test("events tail --url on a terminal: a service's answer quoted in a message comes escaped", async () => {
    // A service (or a proxy before it) whose 503 says something hostile.
    const service = createServer((_request, response) => {
      response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 503, message: `busy ${HOSTILE}` }));
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    after(() => void service.close());
    const url = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
    const child = spawn(process.execPath, [...AS_TERMINAL, CLI_JS, 'events', 'tail', '--url', url], {
      env: baseEnv({ PLANT_STORE_TOKEN: 'tok_abcdefghijklmnopqrstuvwxyz0123456789' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    after(() => void (child.exitCode === null && child.kill('SIGKILL')));
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    await until(() => stderr.includes('reconnecting'), 'the message', { timeoutMs: 10_000 });
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('close', resolve));
    assert.match(stderr, /connection lost \(503: busy Fern\\x1b\[2K\\rOK /);
    assert.deepEqual(controls(stderr), []);
  });

  test('events tail on a terminal: the events escaped, as they commit', async () => {
    const child = spawn(process.execPath, [...AS_TERMINAL, CLI_JS, 'events', 'tail', '--after', FEED_START_ID], {
      env: baseEnv({ DATABASE_URL: databaseUrl }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    after(() => void (child.exitCode === null && child.kill('SIGKILL')));
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    await until(() => stdout.split('\n').length > 2, 'the events', { timeoutMs: 10_000 });
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('close', resolve));
    assert.deepEqual(controls(stdout), []);
    assert.match(stdout, /"name":"Fern\\u001b\[2K\\rOK \\u001b\[31mred\\u009b1m\\u0007\\x7f"/);
  });
});

/**
 * Format characters (Cf) and the line and paragraph separators show as nothing on a terminal while they
 * reorder or hide what follows: U+202E turns the rest of a line around ("deploy\u202Egnp.exe" reads
 * "deployexe.png"), U+200B and U+2060 are invisible. On a terminal they come escaped as the controls do; a
 * token's name, which revoke takes, has its look-alike spaces (U+00A0) escaped too: such names are refused
 * now, but a store may hold them from before.
 */
describe('format characters and look-alike spaces on a terminal', async () => {
  const dir = tempDir(after);
  const databaseUrl = `file:${join(dir, 'plants.db')}`;
  const store = openSqlite(dir);
  const BIDI = 'Fern\u202Eesor\u2066x\u2069\u061C\u200B\u2060\uFEFF\u00AD\u2028\u2029';
  await store.plants.put({ id: 1, name: BIDI });
  await createToken(store.tokens, 'initial', ['plants:read']);
  await createToken(store.tokens, 'initial\u00A0', ['plants:read']);
  await createToken(store.tokens, 'deploy\u202Egnp.exe', ['plants:read']);
  await store.close();
  const cli = (terminal: boolean, ...args: string[]): Promise<Ran> =>
    run([...(terminal ? AS_TERMINAL : []), CLI_JS, ...args], { env: { DATABASE_URL: databaseUrl } });
  const unshown = (text: string) => [...text.matchAll(/[\p{Cf}\p{Zl}\p{Zp}]/gu)].map((m) => m[0]);
  const ESCAPED = 'Fern\\u202eesor\\u2066x\\u2069\\u061c\\u200b\\u2060\\ufeff\\u00ad\\u2028\\u2029';

  test('are escaped in every form a plant is printed in', async () => {
    for (const args of [
      ['plants', 'list'],
      ['plants', 'list', '--format', 'ndjson'],
      ['plants', 'get', '1'],
      ['plants', 'export'],
      ['plants', 'export', '--format', 'csv'],
    ]) {
      const shown = await cli(true, ...args);
      assert.equal(shown.code, 0, shown.stderr);
      assert.deepEqual(unshown(shown.stdout), [], `${args.join(' ')}: ${JSON.stringify(shown.stdout)}`);
      assert.ok(shown.stdout.includes(ESCAPED), `${args.join(' ')}: ${shown.stdout}`);
    }
    // To a pipe, the exact characters.
    assert.ok((await cli(false, 'plants', 'export')).stdout.includes(BIDI));
  });

  test('token list tells the names apart on a terminal: a U+00A0 and a bidi control shown escaped', async () => {
    const table = await cli(true, 'token', 'list');
    assert.equal(table.code, 0, table.stderr);
    const names = table.stdout
      .split('\n')
      .slice(1, -1)
      .map((line) => line.split(/\s{2,}/)[1]);
    // Sorted: tokens are listed by creation time, then by their random ids, and these three may share a millisecond.
    assert.deepEqual(names.sort(), ['deploy\\u202egnp.exe', 'initial', 'initial\\u00a0']);
    const piped = await cli(false, 'token', 'list', '--json');
    assert.deepEqual((JSON.parse(piped.stdout) as Array<{ name: string }>).map((token) => token.name).sort(), [
      'deploy\u202Egnp.exe',
      'initial',
      'initial\u00A0',
    ]);
  });
});
