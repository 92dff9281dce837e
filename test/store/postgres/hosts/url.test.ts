import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { parsePostgresUrl } from '../../../../src/store/postgres/hosts/url.js';

/** What pg itself makes of a single-host URL: the check that each host's URL means what the whole one said. */
function pgReads(url: string): { host: string; port: number; user?: string; password?: string | null; database?: string } {
  const client = new pg.Client({ connectionString: url });
  return { host: client.host, port: client.port, user: client.user, password: client.password ?? null, database: client.database };
}

describe('multi-host PostgreSQL URLs (libpq form)', () => {
  it('splits the hosts, each into a URL of its own that pg reads with the same user, password, database and parameters', () => {
    const parsed = parsePostgresUrl(
      'postgres://plants:s%40cret@db1.example:5432,10.0.0.2,[::1]:5433/plant%20store?target_session_attrs=read-write&sslmode=disable',
    );
    assert.deepEqual(
      parsed.hosts.map((h) => h.label),
      ['db1.example:5432', '10.0.0.2:5432', '[::1]:5433'],
    );
    assert.equal(parsed.sessionAttrs, 'read-write');
    assert.deepEqual(
      parsed.hosts.map((h) => pgReads(h.url)),
      [
        { host: 'db1.example', port: 5432, user: 'plants', password: 's@cret', database: 'plant store' },
        { host: '10.0.0.2', port: 5432, user: 'plants', password: 's@cret', database: 'plant store' },
        { host: '::1', port: 5433, user: 'plants', password: 's@cret', database: 'plant store' },
      ],
    );
    // target_session_attrs is for choosing among the hosts, not for pg; the other parameters stay.
    assert.ok(
      parsed.hosts.every((h) => h.url.endsWith('/plant%20store?sslmode=disable')),
      parsed.hosts[0]!.url,
    );
  });

  it('leaves a single-host URL as it was', () => {
    for (const url of ['postgres://u:p@localhost:5432/db', 'postgresql://db.example/plants?sslmode=require', 'postgres:///plants']) {
      const { hosts, sessionAttrs } = parsePostgresUrl(url);
      assert.deepEqual(
        hosts.map((h) => h.url),
        [url],
      );
      assert.equal(sessionAttrs, undefined);
    }
  });

  it('reads connect_timeout as libpq does (seconds per host, at least 2; 0 is none)', () => {
    assert.equal(parsePostgresUrl('postgres://h1,h2/db?connect_timeout=10').connectTimeoutMs, 10_000);
    assert.equal(parsePostgresUrl('postgres://h1,h2/db?connect_timeout=1').connectTimeoutMs, 2000);
    assert.equal(parsePostgresUrl('postgres://h1,h2/db?connect_timeout=0').connectTimeoutMs, undefined);
    assert.equal(parsePostgresUrl('postgres://h1,h2/db').connectTimeoutMs, undefined);
  });

  it('takes every supported target_session_attrs', () => {
    for (const attrs of ['read-write', 'primary', 'any', 'standby', 'read-only']) {
      assert.equal(parsePostgresUrl(`postgres://h1,h2/db?target_session_attrs=${attrs}`).sessionAttrs, attrs);
    }
  });

  describe('refuses nonsense with a message saying what is wrong, never the password', () => {
    const cases: Array<[string, RegExp]> = [
      ['postgres://u:pw@h1,,h2/db', /host 2 is empty/],
      ['postgres://u:pw@h1,/db', /host 2 is empty/],
      ['postgres://u:pw@h1:0,h2/db', /host 1 \("h1:0"\) has a port that is not a number from 1 to 65535/],
      ['postgres://u:pw@h1:65536/db', /the host \("h1:65536"\) has a port/],
      ['postgres://u:pw@h1:/db', /has a port/],
      ['postgres://u:pw@h1:54x2,h2/db', /has a port/],
      ['postgres://u:pw@[::1/db', /opens an IPv6 address with \[ but does not close it/],
      ['postgres://u:pw@[nothex]:5432/db', /is not an IPv6 address/],
      ['postgres://u:pw@::1/db', /IPv6 address goes in brackets/],
      ['postgres://u:pw@h 1,h2/db', /host 1 \("h 1"\) is not a host name or address/],
      ['postgres://u:pw%zz@h1,h2/db', /the password is not valid percent-encoding/],
      ['postgres://u%G1:pw@h1,h2/db', /the user name is not valid percent-encoding/],
      ['postgres://u:pw@h1,h2/db%', /the database name is not valid percent-encoding/],
      [
        'postgres://u:pw@h1,h2/db?target_session_attrs=prefer-sometimes',
        /target_session_attrs must be one of read-write, primary, any, standby, read-only/,
      ],
      ['postgres://u:pw@h1,h2/db?target_session_attrs=any&target_session_attrs=standby', /names target_session_attrs more than once/],
      ['postgres://u:pw@h1,h2/db?connect_timeout=soon', /connect_timeout must be a whole number of seconds/],
      ['postgres://u:pw@/db?host=h1,h2', /list them in the URL itself/],
      ['postgres:/h1/db', /must be postgres:\/\/user:password@host:port\/database/],
    ];
    for (const [url, message] of cases) {
      it(url, () => {
        assert.throws(
          () => parsePostgresUrl(url),
          (error: Error) => message.test(error.message) && !error.message.includes('pw'),
        );
      });
    }
  });
});
