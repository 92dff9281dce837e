import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inspect } from 'node:util';
import { openStore } from '../../src/store/open.js';
import { closedPort, fakePostgres, type FakeKind } from './postgres/hosts/fake-postgres.js';

/** A password with an @ in it, as a URL carries it: either half of it in any spelling would be a leak. */
const PASSWORD = 'Tulip-7q@Fern-3z';
const HALVES = PASSWORD.split('@');

/** What openStore rejects with for DATABASE_URL `url` (a short DB_TIMEOUT_MS: a retried refusal ends soon). */
async function refusal(url: string, dbTimeoutMs = 400): Promise<Error> {
  const settings = { databaseUrl: url, sqliteSynchronous: 'FULL', dbTimeoutMs, pgPoolSize: 2, writeQueueLimit: 10 } as const;
  const error = await openStore(settings).then(
    () => assert.fail('the store opened'),
    (failure: unknown) => failure,
  );
  assert.ok(error instanceof Error, String(error));
  return error;
}

describe('a PostgreSQL start refused for a connection problem', () => {
  // Each way a connection is refused, on loopback stand-ins, and the driver's reason the operator must read.
  const cases: { name: string; host: FakeKind | 'closed'; query?: string; reason: RegExp }[] = [
    {
      name: 'TLS asked of a server without it',
      host: 'wrong-password',
      query: '?sslmode=verify-full',
      reason: /The server does not support SSL connections/,
    },
    { name: 'the server at max_connections', host: 'full', reason: /\(53300\): sorry, too many clients already/ },
    { name: 'nothing listening', host: 'closed', reason: /ECONNREFUSED 127\.0\.0\.1:\d+/ },
    { name: 'a wrong password', host: 'wrong-password', reason: /password authentication failed for user "plants"/ },
  ];
  for (const { name, host, query, reason } of cases) {
    it(`says why in its one message, without the password: ${name}`, async (context) => {
      const server = host === 'closed' ? undefined : await fakePostgres(host);
      if (server) context.after(() => server.close());
      const port = server?.port ?? (await closedPort());
      const error = await refusal(`postgres://plants:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}/plants${query ?? ''}`);

      assert.match(error.message, /^DATABASE_URL: cannot open postgres:\/\/plants:\*\*\*@127\.0\.0\.1:\d+\/plants/);
      assert.match(error.message, reason);
      // Not in the message, nor anywhere a log line of the error would show (stack, causes, properties).
      for (const text of [error.message, error.stack ?? '', inspect(error, { depth: 8 })]) {
        for (const half of HALVES) assert.ok(!text.includes(half), `the password is in: ${text}`);
      }
    });
  }
});

describe('a refusal another attempt would not change', () => {
  it('a wrong password on the one host is tried once, not again until DB_TIMEOUT_MS', async (context) => {
    const server = await fakePostgres('wrong-password');
    context.after(() => server.close());
    const error = await refusal(`postgres://plants:${encodeURIComponent(PASSWORD)}@127.0.0.1:${server.port}/plants`, 3000);
    assert.match(error.message, /password authentication failed for user "plants"/);
    assert.equal(server.passwords.length, 1, `one attempt, got ${server.passwords.length}`);
  });

  it('with two hosts, the next host is still tried, and once both have refused the attempts end', async (context) => {
    const first = await fakePostgres('wrong-password');
    const second = await fakePostgres('wrong-password');
    context.after(() => Promise.all([first.close(), second.close()]));
    const error = await refusal(`postgres://plants:${encodeURIComponent(PASSWORD)}@127.0.0.1:${first.port},127.0.0.1:${second.port}/plants`, 3000);
    assert.match(error.message, /password authentication failed for user "plants"/);
    assert.deepEqual([first.passwords.length, second.passwords.length], [1, 1]);
  });

  it('a host refusing for good beside one that is unreachable is tried again: the other may come back', async (context) => {
    const refusing = await fakePostgres('wrong-password');
    context.after(() => refusing.close());
    const port = await closedPort();
    // The deadline is what ends these attempts; 3 s leaves room for several passes on a busy machine.
    await refusal(`postgres://plants:${encodeURIComponent(PASSWORD)}@127.0.0.1:${refusing.port},127.0.0.1:${port}/plants`, 3000);
    assert.ok(refusing.passwords.length >= 2, `${refusing.passwords.length} attempts`);
  });
});
