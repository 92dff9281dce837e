import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { CLI_JS, request, run, startServer } from '../process.js';
import { Receiver, verify } from '../webhooks/receiver.js';
import { until } from '../toolkit.js';

/** `plant-store webhook ...` against the database of a running server, as an operator uses it. */

const TOKEN = 'cli-webhook-test-token-0123456789a';

describe('webhook commands against a running server', async () => {
  const databaseUrl = `file:${join(tempDir(after), 'w.db')}`;
  const allowed = { DATABASE_URL: databaseUrl, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
  const webhook = (...args: string[]) => run([CLI_JS, 'webhook', ...args], { env: allowed });
  const server = await startServer(after, {
    env: { ...allowed, PLANT_STORE_TOKENS: TOKEN, WEBHOOK_RETRY_SCHEDULE: '0.1' },
  });
  const receiver = await Receiver.start(after);

  test('add prints the endpoint with its secret; the running server delivers to it; list, deliveries and remove', async () => {
    const added = await webhook('add', receiver.url, '--event', 'plant.created', '--description', 'from the CLI');
    assert.equal(added.code, 0, added.stderr);
    const endpoint = JSON.parse(added.stdout) as { id: string; url: string; events: string[]; secret: string; enabled: boolean; description: string };
    assert.equal(endpoint.url, receiver.url);
    assert.deepEqual(endpoint.events, ['plant.created']);
    assert.equal(endpoint.description, 'from the CLI');
    assert.equal(endpoint.enabled, true);
    assert.match(endpoint.secret, /^whsec_/);

    const created = await request(`${server.url}/plants`, { token: TOKEN, method: 'POST', body: JSON.stringify({ id: 77, name: 'Announced' }) });
    assert.equal(created.status, 200);
    const [delivery] = await receiver.waitFor(1);
    assert.deepEqual(verify(endpoint.secret, delivery!).data, { id: '77', name: 'Announced' });

    const listed = await webhook('list', '--json');
    assert.equal(listed.code, 0, listed.stderr);
    const endpoints = JSON.parse(listed.stdout) as Array<{ id: string }>;
    assert.deepEqual(
      endpoints.map((e) => e.id),
      [endpoint.id],
    );
    assert.ok(!listed.stdout.includes('whsec_'), 'never the secret');
    const table = await webhook('list');
    assert.match(table.stdout, /^ID\s+URL\s+EVENTS\s+STATE\n/);
    assert.ok(table.stdout.includes(endpoint.id));

    await until(
      async () => {
        const log = await webhook('deliveries', endpoint.id, '--json', '--status', 'delivered');
        return log.code === 0 && (JSON.parse(log.stdout) as unknown[]).length === 1;
      },
      'the delivery to be in the log',
      { timeoutMs: 10_000, everyMs: 200 },
    );
    const log = await webhook('deliveries', endpoint.id);
    // The event's type, its plant and its time, then what became of it.
    assert.match(log.stdout, /^ID\s+TYPE\s+PLANT\s+EVENT TIME\s+STATUS/);
    assert.match(log.stdout, /plant\.created\s+77\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+delivered\s+1/);
    const [entry] = JSON.parse((await webhook('deliveries', endpoint.id, '--json')).stdout) as Array<{ plantId: number; occurredAt: string }>;
    assert.equal(entry!.plantId, 77);
    assert.ok(Date.parse(entry!.occurredAt) <= Date.now());

    const removed = await webhook('remove', endpoint.id);
    assert.equal(removed.code, 0, removed.stderr);
    const again = await webhook('remove', endpoint.id);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /no webhook endpoint/);
  });

  test('add --int64 string: the endpoint shows it, and the running server delivers plant ids as JSON strings', async () => {
    const added = await webhook('add', receiver.url, '--event', 'plant.deleted', '--int64', 'string');
    assert.equal(added.code, 0, added.stderr);
    const endpoint = JSON.parse(added.stdout) as { id: string; int64: string; secret: string };
    assert.deepEqual(Object.keys(endpoint), ['id', 'url', 'events', 'int64', 'enabled', 'createdAt', 'secret'], 'in the API order');
    assert.equal(endpoint.int64, 'string');
    const big = '9007199254740993';
    await request(`${server.url}/plants`, { token: TOKEN, method: 'POST', body: `{"id":${big},"name":"Big"}` });
    await request(`${server.url}/plants/${big}`, { token: TOKEN, method: 'DELETE' });
    const delivery = await until(() => receiver.received.find((d) => d.body.includes('plant.deleted')), 'the deletion to be delivered', {
      timeoutMs: 10_000,
    });
    assert.match(delivery.body, new RegExp(`"data":\\{"id":"${big}"\\}\\}$`));
    assert.deepEqual(verify(endpoint.secret, delivery).data, { id: big });
    const listed = JSON.parse((await webhook('list', '--json')).stdout) as Array<{ id: string; int64?: string }>;
    assert.equal(listed.find((e) => e.id === endpoint.id)?.int64, 'string');
    assert.equal((await webhook('remove', endpoint.id)).code, 0);
  });

  test('refuses what HTTP refuses, with exit 1 and one line: a private address (by default), a bad URL, an unknown event or status', async () => {
    const strict = await run([CLI_JS, 'webhook', 'add', 'http://127.0.0.1:9/x'], { env: { DATABASE_URL: databaseUrl } });
    assert.equal(strict.code, 1);
    assert.match(
      strict.stderr,
      /URL the host 127\.0\.0\.1 is not a public address: .* \(127\.0\.0\.1: loopback\); WEBHOOK_ALLOW_PRIVATE_NETWORKS=true allows it, for development only/,
    );
    for (const args of [
      ['add', 'ftp://example.com/x'],
      ['add', receiver.url, '--event', 'plant.eaten'],
      ['add', receiver.url, '--int64', 'bigint'],
      ['add'],
      ['deliveries'],
      ['deliveries', 'ep_x', '--status', 'lost'],
      ['nope'],
    ]) {
      const result = await webhook(...args);
      assert.equal(result.code, 1, `${args.join(' ')}: ${result.stderr}`);
      assert.equal(result.stdout, '');
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    }
    const unknown = await webhook('deliveries', 'ep_nope');
    assert.equal(unknown.code, 1);
  });
});
