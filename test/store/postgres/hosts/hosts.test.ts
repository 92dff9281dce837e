import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inspect } from 'node:util';
import { connectClient, FailoverPool, Hosts, NoSessionError } from '../../../../src/store/postgres/hosts/hosts.js';
import { UnwantedSessionError } from '../../../../src/store/postgres/hosts/sessions.js';
import { parsePostgresUrl } from '../../../../src/store/postgres/hosts/url.js';
import { openStore } from '../../../../src/store/open.js';
import { closedPort, fakePostgres } from './fake-postgres.js';

/**
 * A password as its owner typed it, with an @ in the middle, and as a URL carries it (percent-encoded).
 * Either half of it anywhere, in either spelling, is a leak.
 */
const PASSWORD = 'Tulip-7q@Fern-3z';
const WRITTEN = encodeURIComponent(PASSWORD);
const HALVES = PASSWORD.split('@');

function assertNoPassword(text: string): void {
  for (const half of HALVES) assert.ok(!text.includes(half), `the password is in: ${text}`);
}

/** What a promise expected to fail rejects with. */
function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => assert.fail('it succeeded'),
    (error: unknown) => error,
  );
}

describe('host choice and its errors', () => {
  const hostsOf = () => new Hosts(parsePostgresUrl('postgres://plants:secret@db1:5432,db2:5432/plants'), 'primary', 4000);

  it('moves on to the next host after a failure, and stays on the one that gave a session', () => {
    const hosts = hostsOf();
    assert.equal(hosts.next(), 0);
    hosts.failed(0, new Error('refused'));
    assert.equal(hosts.next(), 1);
    hosts.succeeded(1);
    assert.equal(hosts.next(), 1);
  });

  it('says why the last attempt failed when the deadline passes, so a standby alone is named as such', () => {
    const hosts = hostsOf();
    assert.equal(new NoSessionError(hosts, 4000).message, 'no connection to a primary session on db1:5432, db2:5432 within 4000 ms');
    hosts.failed(0, new UnwantedSessionError('db1:5432', 'primary', { inRecovery: true, readOnly: true }));
    assert.equal(
      new NoSessionError(hosts, 4000).message,
      'no connection to a primary session on db1:5432, db2:5432 within 4000 ms (last attempt: db1:5432 is a standby (in recovery), not what target_session_attrs=primary asks for)',
    );
  });

  it('never puts the password in what it says: host labels, every kind of failed attempt, the deadline, the store, the output', async (context) => {
    // Each kind of host a connection can fail on, on loopback: none listening, a wrong password, a standby
    // where a writable primary is asked for, and one that never answers.
    const refused = await closedPort();
    const wrong = await fakePostgres('wrong-password');
    const standby = await fakePostgres('standby');
    const silent = await fakePostgres('silent');
    context.after(() => Promise.all([wrong.close(), standby.close(), silent.close()]));
    const hostList = [refused, wrong.port, standby.port, silent.port].map((port) => `127.0.0.1:${port}`).join(',');
    const url = `postgres://plants:${WRITTEN}@${hostList}/plants?target_session_attrs=read-write`;

    const said: string[] = [];
    // Everything written to stdout and stderr meanwhile (console included), still written.
    const output = [process.stdout, process.stderr].map((stream) => context.mock.method(stream, 'write'));
    try {
      const parsed = parsePostgresUrl(url);
      said.push(...parsed.hosts.map((host) => host.label));
      // Each host alone, as the migrator connects (connectClient), retrying it until the deadline; all the
      // hosts by the pool (FailoverPool), moving from host to host until its deadline; and the store, opened
      // as the server and the CLI open it. At once, each on hosts of its own (the deadlines are what take time).
      const aloneHosts = parsed.hosts.map((host) => new Hosts({ ...parsed, hosts: [host] }, 'read-write', 5000));
      const hosts = new Hosts(parsed, 'read-write', 600);
      const pool = new FailoverPool(hosts, {}, 600);
      const [pooled, store, ...alone] = await Promise.all([
        failure(pool.connect()),
        // Its error names DATABASE_URL, without the password.
        failure(openStore({ databaseUrl: url, sqliteSynchronous: 'FULL', dbTimeoutMs: 600, pgPoolSize: 2, writeQueueLimit: 10 })),
        // A deadline well before the per-host limit: the silent host ends in a NoSessionError. The others
        // answer, each its own way, and are tried again until 2 s: they end in their own error or in a
        // NoSessionError naming it as the last attempt. At 300 ms for all, a loaded machine (CI) had the
        // standby's first attempt still on its way at the deadline: a NoSessionError naming no attempt.
        ...aloneHosts.map((one, i) => failure(connectClient(one, {}, Date.now() + (i === 3 ? 300 : 2000)))),
      ]);
      await pool.end();
      said.push(...aloneHosts.map((one) => one.lastFailure ?? ''));
      const atDeadline = new NoSessionError(hosts, 600);
      // URLs carrying the password that the parser refuses, one for each part it can name.
      const refusals = [
        `postgres://plants:${WRITTEN}@127.0.0.1:0,127.0.0.1/plants`,
        `postgres://plants:${WRITTEN}@127 0 0 1,127.0.0.1/plants`,
        `postgres://plants:${WRITTEN}%zz@127.0.0.1,127.0.0.2/plants`,
        `postgres://plants:${WRITTEN}@127.0.0.1,127.0.0.2/plants?target_session_attrs=sometimes`,
      ].map((bad) => {
        try {
          parsePostgresUrl(bad);
        } catch (error) {
          return error;
        }
        return assert.fail(`${bad} was taken`);
      });

      // The attempts really were made with the password (so there was one to leak), and failed as each host does.
      for (const host of [wrong, standby]) {
        assert.ok(host.passwords.length > 0 && host.passwords.every((sent) => sent === PASSWORD), `sent ${host.passwords.join(', ')}`);
      }
      assert.deepEqual(
        parsed.hosts.map((host) => host.label),
        [refused, wrong.port, standby.port, silent.port].map((port) => `127.0.0.1:${port}`),
      );
      // Each host alone: its own failure, or a NoSessionError naming it when a retry was on its way at the deadline.
      assert.match(String(alone[0]), /ECONNREFUSED 127\.0\.0\.1:/);
      assert.match(String(alone[1]), /password authentication failed for user "plants"/);
      assert.match(
        String(alone[2]),
        new RegExp(`127\\.0\\.0\\.1:${standby.port} is a standby \\(in recovery\\), not what target_session_attrs=read-write`),
      );
      assert.match(
        String(alone[3]),
        new RegExp(`NoSessionError: no connection to a read-write session on 127\\.0\\.0\\.1:${silent.port} within \\d+ ms$`),
      );
      assert.ok(hosts.lastFailure !== undefined, 'the pool saw attempts fail');
      assert.match(
        atDeadline.message,
        new RegExp(
          `^no connection to a read-write session on ${hostList.replaceAll('.', '\\.').replaceAll(',', ', ')} within 600 ms \\(last attempt: .+\\)$`,
        ),
      );
      assert.match(String(store), /^Error: DATABASE_URL: cannot open postgres:\/\/plants:\*\*\*@127\.0\.0\.1:\d+,/);

      for (const error of [...alone, pooled, atDeadline, store, ...refusals]) {
        assert.ok(error instanceof Error, String(error));
        // What a log line of the error holds: message, stack, causes, and every property (inspect shows them all).
        said.push(error.message, error.stack ?? '', inspect(error, { depth: 8 }));
      }
      said.push(hosts.lastFailure);
    } finally {
      for (const { mock } of output) {
        said.push(...mock.calls.map((call) => String(call.arguments[0])));
        mock.restore();
      }
    }
    for (const text of said) assertNoPassword(text);
  });
});
