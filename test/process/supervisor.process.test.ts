import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { baseEnv, CLI_JS, run } from '../process.js';
import { needs, until } from '../toolkit.js';
import { alive, freePort, serve } from './supervised.js';

/**
 * The supervisor's failure paths (process/supervisor.ts, process/workers.ts), with real processes: a
 * worker that crashes is replaced; one that cannot start ends the start (or, replacing a crashed one, the
 * service) with exit 1; a second signal kills at once; a stop that outlasts SHUTDOWN_TIMEOUT_MS is cut
 * short with exit 1, as is a worker that does not stop cleanly; SIGINT never waits for the drain.
 */

const TOKEN = 'supervisor-test-token-0123456789abcd';

function sqlite(): { DATABASE_URL: string; PLANT_STORE_TOKENS: string } {
  return { DATABASE_URL: `file:${join(tempDir(after), 'plants.db')}`, PLANT_STORE_TOKENS: TOKEN };
}

async function post(url: string, id: number): Promise<number> {
  const response = await fetch(`${url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: `{"id":${id},"name":"p${id}"}`,
  });
  await response.text();
  return response.status;
}

describe('a worker that crashes', () => {
  test('is replaced, in the same supervisor, and the service serves on', async () => {
    const server = await serve(after, { ...sqlite(), PORT: String(await freePort()) });
    const [first] = server.workers();
    assert.equal(await post(server.url, 1), 200);
    process.kill(first!.pid, 'SIGKILL');
    await until(() => server.workers().length === 2, `a new worker; stderr: ${server.stderr()}`, { timeoutMs: 60_000 });
    assert.match(server.stderr(), new RegExp(`plant-store: worker ${first!.pid} exited \\(killed by SIGKILL\\); starting another\\n`));
    assert.equal(server.running(), true);
    assert.equal(await post(server.url, 2), 200);
    assert.equal((await fetch(`${server.url}/plants/1`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
    server.signal('SIGTERM');
    assert.deepEqual(await server.exited, { code: 0, signal: null });
  });

  test('and whose replacement cannot start: the service stops, exit 1, saying why', async () => {
    const env = sqlite();
    const server = await serve(after, env);
    const [first] = server.workers();
    // The store file moved away and a folder in its place: the running worker has the file open, a new one cannot open it.
    const file = env.DATABASE_URL.slice('file:'.length);
    renameSync(file, `${file}.moved`);
    mkdirSync(file);
    process.kill(first!.pid, 'SIGKILL');
    assert.deepEqual(await server.exited, { code: 1, signal: null });
    assert.match(server.stderr(), /plant-store: cannot start: DATABASE_URL: cannot open/);
    assert.match(
      server.stderr(),
      /plant-store: worker \d+, replacing one that exited, could not start \(exit code 1\): DATABASE_URL: cannot open .*; stopping\n/,
    );
  });
});

describe('a worker that dies before it listens', () => {
  test('at start, with several workers: every worker stopped, exit 1, the workers saying why, no stack', async () => {
    const dir = tempDir(after);
    writeFileSync(join(dir, 'x.db'), 'not a database, and long enough to be read as a header of one'.repeat(30));
    const result = await run([CLI_JS, 'serve'], {
      env: { PORT: '0', DATABASE_URL: `file:${join(dir, 'x.db')}`, WEB_CONCURRENCY: '2' },
      timeoutMs: 60_000,
    });
    assert.equal(result.code, 1, result.stderr);
    const lines = result.stderr.split('\n').filter((line) => line !== '' && line !== 'plant-store: starting 2 worker processes');
    assert.ok(lines.length >= 1 && lines.length <= 2, result.stderr);
    for (const line of lines) assert.match(line, /^plant-store: cannot start: DATABASE_URL: cannot open/);
    assert.ok(!result.stderr.includes('    at '), 'no stack trace');
  });
});

describe('signals', () => {
  test('a second SIGTERM during the drain kills the workers at once: exit 1', async () => {
    const server = await serve(after, { ...sqlite(), SHUTDOWN_DRAIN_MS: '600000' });
    const [worker] = server.workers();
    server.signal('SIGTERM');
    await until(() => server.stdout().includes('"msg":"shutting down: /readyz answers 503'), 'the drain to begin', { timeoutMs: 30_000 });
    assert.equal((await fetch(`${server.url}/readyz`)).status, 503);
    server.signal('SIGTERM');
    assert.deepEqual(await server.exited, { code: 1, signal: null });
    assert.match(server.stderr(), /plant-store: second SIGTERM: killing the workers\n/);
    await until(() => !alive(worker!.pid), 'the worker to be gone', { timeoutMs: 30_000 });
  });

  test('SIGINT stops at once, whatever SHUTDOWN_DRAIN_MS: no drain, exit 0', async () => {
    const server = await serve(after, { ...sqlite(), SHUTDOWN_DRAIN_MS: '600000' });
    server.signal('SIGINT');
    // The drain would take ten minutes; the stop is done long before the test's time runs out.
    assert.deepEqual(await server.exited, { code: 0, signal: null });
    assert.ok(!server.stdout().includes('/readyz answers 503'), server.stdout());
    assert.match(server.stdout(), /"signal":"SIGINT","msg":"shutting down: finishing requests in flight"/);
  });

  test('a stop that outlasts SHUTDOWN_TIMEOUT_MS (a request in flight that never ends): the worker exits 1 at once, and so does the supervisor', async () => {
    const server = await serve(after, { ...sqlite(), SHUTDOWN_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '600000' });
    // A request taken in (Expect: 100-continue makes the server say so), half its body sent, the rest never.
    const socket = connect(server.port, '127.0.0.1');
    socket.on('error', () => undefined);
    let received = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\n` +
        `Content-Length: 100\r\nExpect: 100-continue\r\n\r\n`,
    );
    await until(() => received.startsWith('HTTP/1.1 100 Continue'), 'the server to take the request in', { timeoutMs: 30_000 });
    socket.write('{"id":');
    server.signal('SIGTERM');
    assert.deepEqual(await server.exited, { code: 1, signal: null });
    assert.match(
      server.stdout(),
      /"level":50,.*"msg":"still stopping 1 s after the drain \(requests in flight, or a service: see above\); exiting anyway"/,
    );
    socket.destroy();
  });

  test('a worker that does not stop cleanly (killed in its drain): the supervisor exits 1, naming it', async () => {
    const server = await serve(after, { ...sqlite(), SHUTDOWN_DRAIN_MS: '600000' });
    const [worker] = server.workers();
    server.signal('SIGTERM');
    await until(() => server.stdout().includes('"msg":"shutting down: /readyz answers 503'), 'the drain to begin', { timeoutMs: 30_000 });
    process.kill(worker!.pid, 'SIGKILL');
    assert.deepEqual(await server.exited, { code: 1, signal: null });
    assert.match(
      server.stdout(),
      new RegExp(`"msg":"error while shutting down: workers: did not stop cleanly: worker ${worker!.pid} \\(killed by SIGKILL\\)"`),
    );
  });
});

const script = ['/usr/bin/script', '/bin/script'].find((path) => existsSync(path));

test(
  'under a terminal, SIGHUP is the terminal hanging up: the service stops, at once, rather than reload and outlive it',
  { skip: needs('a hangup under a terminal', !script && 'util-linux `script` is not installed, so no terminal can be given to the server') },
  async () => {
    const env = sqlite();
    // script gives the server a terminal; its log is JSON all the same, to be read here.
    const child = spawn(script!, ['-qec', `'${process.execPath}' '${CLI_JS}' serve`, '/dev/null'], {
      env: baseEnv({ PORT: '0', HOST: '127.0.0.1', LOG_FORMAT: 'json', SHUTDOWN_DRAIN_MS: '600000', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const closed = new Promise((resolve) => child.once('close', resolve));
    after(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await closed;
    });
    await until(() => output.includes('"msg":"supervising 1 worker"'), `the service to serve; got: ${output}`, { timeoutMs: 60_000 });
    const line = output.split(/\r?\n/).find((text) => text.includes('"msg":"supervising 1 worker"'))!;
    const { pid, workers } = JSON.parse(line) as { pid: number; workers: number[] };
    process.kill(pid, 'SIGHUP');
    await until(() => !alive(pid) && !alive(workers[0]!), 'the supervisor and its worker to exit', { timeoutMs: 60_000 });
    // Read once `script` has relayed all of it: the supervisor's last lines are written as it exits, and
    // were read here before they came through, now and then (CI, once).
    await closed;
    assert.ok(!output.includes('reloading'), output);
    assert.match(output, /"signal":"SIGHUP","msg":"the terminal hung up: stopping, the workers at once"/);
  },
);
