import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { assertFails, cli, CLI_JS, request, run, startServer } from '../process.js';
import { freePort } from '../store/postgres/pg-server.js';
import { keyOf, lossyProxy } from './lossy-proxy.js';

/**
 * `plant-store webhook add|list|remove|deliveries --url URL`: the webhook commands through a running
 * service's API (POST /webhooks, GET /webhooks, DELETE /webhooks/{id}, GET /webhooks/{id}/deliveries), from a
 * folder where no store is (none is ever opened): the same output as on the store, the service's rules and
 * refusals, one line each; an add whose answer is lost is asked once more under the same Idempotency-Key.
 */

const STATIC = 'cli-webhooks-url-static-0123456789abcdef';

interface Listed {
  id: string;
  url: string;
  events: string[];
  description?: string;
  int64?: string;
  enabled: boolean;
  createdAt: string;
}

describe('webhooks through a running service (--url)', async () => {
  const dir = tempDir(after);
  const databaseUrl = `file:${join(dir, 'server.db')}`;
  // The service allows private addresses (its receivers are on this machine); the CLI's environment does not.
  const server = await startServer(after, {
    env: {
      DATABASE_URL: databaseUrl,
      PLANT_STORE_TOKENS: STATIC,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    },
  });
  const away = tempDir(after);
  after(() => assert.ok(!existsSync(join(away, 'data')), 'no store was opened: no ./data folder made'));
  const webhook = (args: string[], token = STATIC, url = server.url) =>
    run([CLI_JS, 'webhook', ...args, '--url', url], { cwd: away, env: { PLANT_STORE_TOKEN: token } });
  /** The same command on the server's store, as an operator on its machine runs it. */
  const onStore = (...args: string[]) => cli(databaseUrl, 'webhook', ...args);
  const listed = async (): Promise<Listed[]> => JSON.parse((await onStore('list', '--json')).stdout) as Listed[];
  // A token without webhooks:manage, made on the server's store.
  const reader = (await cli(databaseUrl, 'token', 'create', '--name', 'reader', '--scope', 'plants:read')).stdout.trim();

  test('add prints the endpoint with its secret, registered by the service by its own rules', async () => {
    const added = await webhook(['add', 'http://127.0.0.1:9/hooks', '--event', 'plant.created', '--description', 'from afar']);
    assert.equal(added.code, 0, added.stderr);
    const endpoint = JSON.parse(added.stdout) as Listed & { secret: string };
    assert.match(endpoint.secret, /^whsec_/);
    assert.deepEqual(
      { ...endpoint, id: '…', createdAt: '…', secret: '…' },
      { id: '…', url: 'http://127.0.0.1:9/hooks', events: ['plant.created'], description: 'from afar', enabled: true, createdAt: '…', secret: '…' },
    );
    assert.equal(added.stderr, `registered webhook endpoint ${endpoint.id} at ${server.url}; its secret is shown only this once\n`);
    const { secret: _secret, ...shown } = endpoint;
    assert.deepEqual(
      (await listed()).find((e) => e.id === endpoint.id),
      shown,
      'the endpoint the store holds',
    );
    // Printed as the store-side add prints it: the same fields, in the same order.
    const local = await run([CLI_JS, 'webhook', 'add', 'https://93.184.215.14/hooks', '--description', 'here'], {
      cwd: dir,
      env: { DATABASE_URL: databaseUrl },
    });
    assert.equal(local.code, 0, local.stderr);
    assert.deepEqual(Object.keys(JSON.parse(local.stdout) as object), Object.keys(endpoint));

    // --int64 string, sent as the body's int64: the service keeps it; printed as the store-side add prints it.
    const strings = await webhook(['add', 'http://127.0.0.1:9/strings', '--int64', 'string']);
    assert.equal(strings.code, 0, strings.stderr);
    const made = JSON.parse(strings.stdout) as Listed & { int64: string };
    assert.equal(made.int64, 'string');
    assert.equal((await listed()).find((e) => e.id === made.id)?.int64, 'string');
    const here = await run([CLI_JS, 'webhook', 'add', 'https://93.184.215.14/hooks', '--int64', 'string'], {
      cwd: dir,
      env: { DATABASE_URL: databaseUrl },
    });
    assert.deepEqual(Object.keys(JSON.parse(here.stdout) as object), Object.keys(made));
  });

  test('list prints what the store-side list prints, table and JSON, every page followed', async () => {
    const answers = [];
    for (let batch = 0; batch < 6; batch++) {
      answers.push(
        ...(await Promise.all(
          Array.from({ length: 170 }, (_, i) =>
            request(`${server.url}/webhooks`, { method: 'POST', token: STATIC, body: JSON.stringify({ url: `http://127.0.0.1:9/${batch}-${i}` }) }),
          ),
        )),
      );
    }
    assert.ok(answers.every((answer) => answer.status === 201));
    const json = await webhook(['list', '--json']);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(json.stderr, '');
    assert.ok((JSON.parse(json.stdout) as unknown[]).length > 1000, 'more than one page');
    assert.equal(json.stdout, (await onStore('list', '--json')).stdout);
    assert.ok(!json.stdout.includes('whsec_'), 'never a secret');
    const table = await webhook(['list']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^ID +URL +EVENTS +STATE\n/);
    assert.equal(table.stdout, (await onStore('list')).stdout);
  });

  test('deliveries prints what the store-side log prints, with --status and --limit; remove deletes the endpoint', async () => {
    const added = await webhook(['add', 'http://127.0.0.1:9/log', '--event', 'plant.created']);
    const { id } = JSON.parse(added.stdout) as { id: string };
    // Paused, so that its messages stay as they are (failed: the endpoint was disabled at the event).
    const paused = await request(`${server.url}/webhooks/${id}`, { method: 'PATCH', token: STATIC, body: '{"enabled":false}' });
    assert.equal(paused.status, 200, paused.text);
    for (const plant of [1, 2, 3]) {
      const created = await request(`${server.url}/plants`, {
        method: 'POST',
        token: STATIC,
        body: JSON.stringify({ id: plant, name: `p${plant}` }),
      });
      assert.equal(created.status, 200, created.text);
    }
    for (const args of [[], ['--json'], ['--status', 'failed', '--limit', '2'], ['--status', 'pending', '--json']]) {
      const through = await webhook(['deliveries', id, ...args]);
      assert.equal(through.code, 0, through.stderr);
      assert.equal(through.stdout, (await onStore('deliveries', id, ...args)).stdout, args.join(' '));
    }
    const log = JSON.parse((await webhook(['deliveries', id, '--json'])).stdout) as Array<{ plantId: number; type: string }>;
    assert.deepEqual(
      log.map((m) => [m.plantId, m.type]),
      [
        [3, 'plant.created'],
        [2, 'plant.created'],
        [1, 'plant.created'],
      ],
    );

    const removed = await webhook(['remove', id]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(removed.stderr, `removed webhook endpoint ${id} at ${server.url}\n`);
    assert.ok(!(await listed()).some((e) => e.id === id));
    assertFails(await webhook(['remove', id]), `no webhook endpoint with id ${id} at ${server.url}`);
    assertFails(await webhook(['deliveries', id]), `no webhook endpoint with id ${id} at ${server.url}`);
  });

  test("the service's refusals, one line and exit 1: its URL rules, a scope lacking, a bad token; the CLI's own: an unknown event", async () => {
    const before = (await listed()).length;
    assertFails(await webhook(['add', 'ftp://example.com/x']), /^plant-store: body\.url must be an absolute http:\/\/ or https:\/\/ URL/);
    assertFails(await webhook(['add', 'http://127.0.0.1:9/x', '--event', 'plant.eaten']), /^plant-store: webhook add: unknown event "plant\.eaten"/);
    const lacks = 'this token lacks the scope webhooks:manage that this operation needs';
    for (const args of [['add', 'http://127.0.0.1:9/x'], ['list'], ['remove', 'ep_x'], ['deliveries', 'ep_x']]) {
      assertFails(await webhook(args, reader), lacks);
    }
    assertFails(
      await webhook(['list'], 'ps_not-a-token-of-this-service'),
      /^plant-store: .*\(the token in PLANT_STORE_TOKEN, at http:\/\/127\.0\.0\.1:\d+\)\n$/,
    );
    assert.equal((await listed()).length, before, 'nothing registered');
  });

  test('an unreachable service, a missing token: one line', async () => {
    const port = await freePort();
    for (const args of [['list'], ['add', 'http://127.0.0.1:9/x'], ['remove', 'ep_x'], ['deliveries', 'ep_x']]) {
      assertFails(
        await webhook(args, STATIC, `http://127.0.0.1:${port}`),
        `cannot reach the service at http://127.0.0.1:${port}: connection refused (ECONNREFUSED)`,
      );
    }
    const tokenless = await run([CLI_JS, 'webhook', 'list', '--url', server.url], { cwd: away, env: {} });
    assertFails(tokenless, /--url needs a token: set the environment variable PLANT_STORE_TOKEN to a token of the service \(with webhooks:manage\)/);
    const viaEnv = await run([CLI_JS, 'webhook', 'list', '--json'], {
      cwd: away,
      env: { PLANT_STORE_URL: server.url, PLANT_STORE_TOKEN: STATIC, DATABASE_URL: 'file:/nonexistent/never.db' },
    });
    assert.equal(viaEnv.code, 0, viaEnv.stderr);
  });

  test('add whose answer is lost: asked once more under the same Idempotency-Key, one endpoint registered', async () => {
    const proxy = await lossyProxy(server.port, (n) => n === 1);
    const added = await webhook(['add', 'http://127.0.0.1:9/lost-once'], STATIC, proxy.url);
    assert.equal(added.code, 0, added.stderr);
    const endpoint = JSON.parse(added.stdout) as { id: string; secret: string };
    const registered = (await listed()).filter((e) => e.url === 'http://127.0.0.1:9/lost-once');
    assert.deepEqual(
      registered.map((e) => e.id),
      [endpoint.id],
      'one endpoint, the one printed',
    );
    const lines = added.stderr.split('\n');
    assert.match(lines[0]!, /; asking once more, with the same Idempotency-Key$/);
    assert.equal(lines[1], `registered webhook endpoint ${endpoint.id} at ${proxy.url}; its secret is shown only this once`);
    const [first, second] = proxy.requests.map(keyOf);
    assert.match(first ?? '', /^[0-9a-f-]{36}$/, 'an Idempotency-Key of its own');
    assert.equal(second, first, 'the same key asked again');

    const lost = await lossyProxy(server.port, () => true);
    const twice = await webhook(['add', 'http://127.0.0.1:9/lost-twice'], STATIC, lost.url);
    assert.equal(twice.code, 1);
    assert.equal(twice.stdout, '', 'no secret');
    const said = twice.stderr.trimEnd().split('\n');
    assert.equal(said.length, 2, twice.stderr);
    assert.match(said[0]!, /; asking once more, with the same Idempotency-Key$/);
    assert.equal(
      said[1]!.replace(/: no answer from the service at \S+: .*, twice:/, ': …, twice:'),
      `plant-store: …, twice: the endpoint may have been registered, its secret lost; "plant-store webhook list --url ${lost.url}" shows whether it was (remove it, and add it again for a secret)`,
    );
    assert.equal((await listed()).filter((e) => e.url === 'http://127.0.0.1:9/lost-twice').length, 1, 'registered once, not twice');
  });
});
