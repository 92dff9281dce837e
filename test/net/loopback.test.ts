import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLoopbackHost } from '../../src/net/loopback.js';

/**
 * Which hosts are this machine's loopback (src/net/loopback.ts): what lets JWT_JWKS_URL be plain http
 * (its refusals: test/config/jwt.test.ts). Hosts as a URL's hostname spells them, IPv6 in brackets or not.
 */
describe('isLoopbackHost', () => {
  it('takes localhost in any case, 127.0.0.0/8 and ::1, in any spelling of the address', () => {
    for (const host of ['localhost', 'LocalHost', 'LOCALHOST', '127.0.0.1', '127.9.8.7', '127.255.255.255', '::1', '[::1]', '0:0:0:0:0:0:0:1']) {
      assert.equal(isLoopbackHost(host), true, host);
    }
  });

  it('takes an IPv4-mapped IPv6 address of 127.0.0.0/8, as a URL writes it too', () => {
    const hostname = new URL('http://[::ffff:127.0.0.1]:9000/keys').hostname;
    assert.equal(hostname, '[::ffff:7f00:1]');
    for (const host of ['::ffff:127.0.0.1', hostname]) assert.equal(isLoopbackHost(host), true, host);
    assert.equal(isLoopbackHost('::ffff:10.0.0.1'), false);
  });

  it('refuses every other address: next to the block, private, public, unspecified', () => {
    for (const host of ['126.255.255.255', '128.0.0.1', '10.0.0.5', '192.168.1.1', '93.184.215.14', '0.0.0.0', '::', '[::]', '::2', 'fe80::1']) {
      assert.equal(isLoopbackHost(host), false, host);
    }
  });

  it('refuses any name but localhost, whatever it resolves to today (DNS can change its answer)', () => {
    for (const host of ['localhost.', 'localhost.example', 'id.localhost.example', 'my-localhost', 'example.com', '']) {
      assert.equal(isLoopbackHost(host), false, JSON.stringify(host));
    }
  });
});
