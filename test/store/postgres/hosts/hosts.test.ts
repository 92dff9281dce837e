import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hosts, NoSessionError, UnwantedSessionError } from '../../../../src/store/postgres/hosts/hosts.js';
import { parsePostgresUrl } from '../../../../src/store/postgres/hosts/url.js';

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

  it('never puts the password in what it says', () => {
    const hosts = hostsOf();
    hosts.failed(1, new Error('connect ECONNREFUSED 10.0.0.2:5432'));
    assert.doesNotMatch(new NoSessionError(hosts, 4000).message, /secret/);
  });
});
