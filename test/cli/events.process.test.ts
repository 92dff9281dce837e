import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { FEED_START_ID } from '../../src/store/event-store.js';
import { tempDir } from '../helpers.js';
import { baseEnv, cli, CLI_JS, request, run, startServer, type Exit, type ServerProcess } from '../process.js';
import { freePort, postgresUnavailableReason, TestPostgres } from '../store/postgres/pg-server.js';
import { needs, until } from '../toolkit.js';

/** `plant-store events tail`: the change feed as NDJSON, from the store DATABASE_URL names, until stopped. */

const TOKEN = 'cli-events-token-0123456789abcdefgh';

interface Tail {
  /** The complete lines printed so far. */
  lines(): string[];
  stderr(): string;
  /** Sends the signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

/** Starts `plant-store events tail ...args` against `databaseUrl` (or `env`); killed when the file ends. */
function tail(databaseUrl: string | Record<string, string>, ...args: string[]): Tail {
  const env = typeof databaseUrl === 'string' ? { DATABASE_URL: databaseUrl } : databaseUrl;
  const child = spawn(process.execPath, [CLI_JS, 'events', 'tail', ...args], {
    env: baseEnv({ ...env, EVENTS_POLL_MS: '50' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Exit>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    lines: () => stdout.split('\n').slice(0, -1),
    stderr: () => stderr,
    stop: (signal = 'SIGINT') => {
      child.kill(signal);
      return exited;
    },
  };
}

/** Every event GET /events lists, each as its JSON text (the lines `events tail` must print). */
async function listed(server: ServerProcess): Promise<string[]> {
  const res = await request(`${server.url}/events?limit=1000`, { token: TOKEN });
  assert.equal(res.status, 200, res.text);
  return res.text === '[]' ? [] : res.text.slice(1, -1).split(/,(?=\{"id":"msg_)/);
}

async function write(server: ServerProcess, method: string, path: string, body?: string): Promise<void> {
  const res = await request(`${server.url}${path}`, { method, token: TOKEN, body });
  assert.ok(res.status === 200 || res.status === 204, `${method} ${path}: ${res.status} ${res.text}`);
}

describe('events tail on SQLite', async () => {
  const databaseUrl = `file:${join(tempDir(after), 'e.db')}`;
  const server = await startServer(after, { env: { DATABASE_URL: databaseUrl, PLANT_STORE_TOKENS: TOKEN } });

  test('prints every event after --after as NDJSON (the JSON GET /events lists), then each one as it commits; Ctrl-C ends it with 0', async () => {
    await write(server, 'POST', '/plants', '{"id":9223372036854775807,"name":"Max","tag":"big"}');
    await write(server, 'POST', '/plants', '{"id":1,"name":"One"}');
    const [first] = await listed(server);
    const firstId = (JSON.parse(first!) as { id: string }).id;
    const following = tail(databaseUrl, '--after', firstId);
    const fromStart = tail(databaseUrl, '--after', FEED_START_ID);
    await until(() => following.lines().length === 1, 'the event after --after', { timeoutMs: 10_000 });
    await write(server, 'PATCH', '/plants/1', '{"tag":"green"}');
    await write(server, 'DELETE', '/plants/9223372036854775807');
    const all = await listed(server);
    assert.equal(all.length, 4);
    await until(() => following.lines().length === 3 && fromStart.lines().length === 4, 'the new events', { timeoutMs: 10_000 });
    assert.deepEqual(following.lines(), all.slice(1), 'exactly the JSON GET /events lists, ids exact, in order');
    assert.deepEqual(fromStart.lines(), all, `${FEED_START_ID} is the place before every event`);
    assert.deepEqual(
      all.map((line) => (JSON.parse(line) as { type: string }).type),
      ['plant.created', 'plant.created', 'plant.updated', 'plant.deleted'],
    );
    assert.deepEqual(await following.stop('SIGINT'), { code: 0, signal: null });
    assert.deepEqual(await fromStart.stop('SIGTERM'), { code: 0, signal: null });
  });

  test('without --after starts from now; --type (repeatable) keeps only those types', async () => {
    await write(server, 'POST', '/plants', '{"id":2,"name":"Before"}');
    const now = tail(databaseUrl);
    const deletes = tail(databaseUrl, '--type', 'plant.deleted', '--type', 'plant.updated', '--after', FEED_START_ID);
    const newest = (JSON.parse((await listed(server)).at(-1)!) as { id: string }).id;
    await until(() => now.stderr().includes(`following the events after ${newest}\n`), 'the tail to start at the newest event', {
      timeoutMs: 10_000,
    });
    const typeOf = (line: string) => (JSON.parse(line) as { type: string }).type;
    const wanted = (lines: string[]) => lines.filter((line) => typeOf(line) !== 'plant.created');
    const earlier = wanted(await listed(server));
    assert.ok(earlier.length > 0, 'the first test patched and deleted');
    await until(() => deletes.lines().length === earlier.length, 'the earlier updates and deletions', { timeoutMs: 10_000 });
    await write(server, 'POST', '/plants', '{"id":3,"name":"After"}');
    await write(server, 'DELETE', '/plants/3');
    await until(() => now.lines().length === 2 && deletes.lines().length === earlier.length + 1, 'the new events', { timeoutMs: 10_000 });
    const all = await listed(server);
    assert.deepEqual(now.lines(), all.slice(-2), 'only what committed after it started');
    assert.deepEqual(deletes.lines(), wanted(all), 'only updates and deletions');
    assert.equal(typeOf(deletes.lines().at(-1)!), 'plant.deleted');
    assert.equal((await now.stop()).code, 0);
    assert.equal((await deletes.stop()).code, 0);
  });

  test('refuses bad arguments with exit 1 and one line pointing at the help, and an id the feed does not hold saying how to resynchronise', async () => {
    for (const args of [['follow'], ['tail', '--after', 'nope'], ['tail', '--type', 'plant.eaten'], ['tail', '--since', 'x']]) {
      const result = await cli(databaseUrl, 'events', ...args);
      assert.equal(result.code, 1, `${args.join(' ')}: ${result.stderr}`);
      assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr);
      assert.match(result.stderr, /plant-store events( tail)? --help/, 'where the help is');
    }
    // Without its action, the command's help, on stderr.
    const bare = await cli(databaseUrl, 'events');
    assert.equal(bare.code, 1);
    assert.match(bare.stderr, /events tail/);
    const gone = await cli(databaseUrl, 'events', 'tail', '--after', 'msg_01KAT3Z4K8Q2W5N7X9Y0A1B2C3');
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /msg_01KAT3Z4K8Q2W5N7X9Y0A1B2C3 is no longer in the feed.*plants export/);
    assert.equal(gone.stdout, '');
  });
});

describe('events tail --url, from a running service', async () => {
  const dir = tempDir(after);
  const databaseUrl = `file:${join(dir, 'u.db')}`;
  const env = { DATABASE_URL: databaseUrl, PLANT_STORE_TOKENS: TOKEN, PORT: String(await freePort()) };
  let server = await startServer(after, { env });

  test('stops with exit 1 on what reconnecting cannot mend (a bad token, an id the feed does not hold), and without a token', async () => {
    const denied = await run([CLI_JS, 'events', 'tail', '--url', server.url], { env: { PLANT_STORE_TOKEN: 'ps_not-a-token' } });
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /GET \/events: 401/);
    const gone = await run([CLI_JS, 'events', 'tail', '--url', server.url, '--after', 'msg_01KAT3Z4K8Q2W5N7X9Y0A1B2C3'], {
      env: { PLANT_STORE_TOKEN: TOKEN },
    });
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /GET \/events: 410: event msg_01KAT3Z4K8Q2W5N7X9Y0A1B2C3 is no longer in the feed/);
    const tokenless = await run([CLI_JS, 'events', 'tail', '--url', server.url], { env: {} });
    assert.equal(tokenless.code, 1);
    assert.match(tokenless.stderr, /PLANT_STORE_TOKEN/);
  });

  test('gives up on an address where nothing ever answered, with exit 1 and a line naming it', async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const result = await run([CLI_JS, 'events', 'tail', '--url', nowhere], { env: { PLANT_STORE_TOKEN: TOKEN }, timeoutMs: 60_000 });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /cannot connect to http:\/\/127\.0\.0\.1:\d+\/events .*; trying again\n/);
    const last = result.stderr.trim().split('\n').at(-1)!;
    assert.match(last, new RegExp(`^plant-store: nothing answers at ${nowhere.replaceAll('.', '\\.')}/events \\(.*ECONNREFUSED.*\\), tried for 5 s`));
    assert.equal(result.stdout, '');
  });

  test('follows GET /events as a stream and, when the service goes away and comes back, resumes with Last-Event-ID: every event once', async () => {
    await write(server, 'POST', '/plants', '{"id":9223372036854775807,"name":"Max"}');
    const following = tail({ PLANT_STORE_TOKEN: TOKEN }, '--url', server.url, '--after', FEED_START_ID);
    await until(() => following.lines().length === 1, 'the first event', { timeoutMs: 10_000 });
    await write(server, 'PATCH', '/plants/9223372036854775807', '{"tag":"big"}');
    await until(() => following.lines().length === 2, 'the event as it commits', { timeoutMs: 10_000 });

    // The service stops (its streams end cleanly); changes are made meanwhile, straight into its database.
    assert.equal((await server.stop('SIGTERM')).code, 0);
    const imported = await run([CLI_JS, 'plants', 'import', '-'], { env: { DATABASE_URL: databaseUrl }, input: '{"id":5,"name":"while away"}\n' });
    assert.equal(imported.code, 0, imported.stderr);
    await until(() => /connection lost/.test(following.stderr()), 'the tail to notice', { timeoutMs: 10_000 });
    // (Last: a server started in a test is stopped when that test ends.)
    server = await startServer(after, { env });
    await write(server, 'DELETE', '/plants/5');
    await until(() => following.lines().length === 4, 'the events made while it was away, and after', { timeoutMs: 20_000 });
    assert.match(following.stderr(), /reconnected/);
    assert.deepEqual(following.lines(), await listed(server), 'every event once, in order, as GET /events lists them');
    assert.deepEqual(await following.stop(), { code: 0, signal: null });
    // Where it started, said once on stderr, as the store-side tail says it.
    assert.equal(following.stderr().split('\n')[0], `plant-store: following the events after ${FEED_START_ID}`);
    assert.equal(following.stderr().match(/following the events after/g)?.length, 1);

    // From now: the newest event, named by the stream's start frame, for a later --after.
    const newest = (await listed(server)).at(-1)!;
    const fromNow = tail({ PLANT_STORE_TOKEN: TOKEN }, '--url', server.url);
    await until(() => /following the events after/.test(fromNow.stderr()), 'where it starts', { timeoutMs: 10_000 });
    assert.equal(fromNow.stderr().trim(), `plant-store: following the events after ${(JSON.parse(newest) as { id: string }).id}`);
    assert.deepEqual(await fromNow.stop(), { code: 0, signal: null });
  });
});

const skipReason = needs('events tail on PostgreSQL', postgresUnavailableReason());
if (skipReason) {
  test('events tail on PostgreSQL', { skip: skipReason }, () => {});
} else {
  test(
    'events tail on PostgreSQL resumes by itself after the database restarts, missing nothing and printing nothing twice',
    { timeout: 120_000 },
    async () => {
      const postgres = await TestPostgres.start(after);
      const databaseUrl = await postgres.createDatabase();
      const server = await startServer(after, { env: { DATABASE_URL: databaseUrl, PLANT_STORE_TOKENS: TOKEN } });
      await write(server, 'POST', '/plants', '{"id":1,"name":"Before"}');
      const following = tail(databaseUrl, '--after', FEED_START_ID);
      await until(() => following.lines().length === 1, 'the first event', { timeoutMs: 10_000 });

      await postgres.stop('fast');
      await until(() => /cannot read events/.test(following.stderr()), 'the tail to notice the outage', { timeoutMs: 10_000 });
      await postgres.startServer();
      // The server reconnects too; its first writes may be refused while it does.
      await until(
        async () => (await request(`${server.url}/plants`, { method: 'POST', token: TOKEN, body: '{"id":2,"name":"After"}' })).status === 200,
        'a write after the restart',
        { timeoutMs: 30_000 },
      );
      await write(server, 'DELETE', '/plants/1');
      await until(() => following.lines().length === 3, 'the events made after the restart', { timeoutMs: 20_000 });
      assert.match(following.stderr(), /reading events again/);
      assert.deepEqual(following.lines(), await listed(server), 'every event once, in order');
      assert.deepEqual(await following.stop(), { code: 0, signal: null });
    },
  );
}
