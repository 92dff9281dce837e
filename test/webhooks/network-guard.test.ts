import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LookupAddress } from 'node:dns';
import { checkWebhookUrl, forbiddenAddress, guardedLookup, parseWebhookUrl, WebhookUrlError } from '../../src/webhooks/network-guard.js';

describe('the network guard', () => {
  it('refuses every non-public address, IPv4 and IPv6, and IPv4 carried inside IPv6', () => {
    const forbidden: Array<[string, RegExp]> = [
      ['127.0.0.1', /loopback/],
      ['127.255.255.254', /loopback/],
      ['0.0.0.0', /unspecified/],
      ['10.1.2.3', /private/],
      ['172.16.0.1', /private/],
      ['172.31.255.255', /private/],
      ['192.168.0.1', /private/],
      ['169.254.169.254', /link-local/],
      ['100.64.0.1', /CGNAT/],
      ['100.127.255.255', /CGNAT/],
      ['224.0.0.251', /multicast/],
      ['239.255.255.250', /multicast/],
      ['255.255.255.255', /reserved/],
      ['198.18.0.1', /benchmarking/],
      ['::', /unspecified/],
      ['::1', /loopback/],
      ['fc00::1', /unique local/],
      ['fdff:ffff::1', /unique local/],
      ['fe80::1', /link-local/],
      ['fe80::1%eth0', /link-local/],
      ['ff02::1', /multicast/],
      ['::ffff:127.0.0.1', /loopback, inside an IPv6 address/],
      ['::ffff:7f00:1', /loopback, inside an IPv6 address/],
      ['::ffff:10.0.0.1', /private, inside an IPv6 address/],
      ['::ffff:169.254.169.254', /link-local/],
      ['64:ff9b::a9fe:a9fe', /link-local/],
      ['2002:7f00:1::', /loopback/],
      // Every IPv4 block of the IANA special-purpose registry that is not globally reachable.
      ['0.1.2.3', /unspecified/],
      ['192.0.0.9', /IETF protocol assignments/],
      ['192.0.0.170', /IETF protocol assignments/],
      ['192.0.2.1', /documentation/],
      ['192.88.99.1', /6to4 relay/],
      ['198.19.255.255', /benchmarking/],
      ['198.51.100.1', /documentation/],
      ['203.0.113.9', /documentation/],
      ['240.0.0.1', /reserved/],
      // Every IPv6 one, and whatever lies outside global unicast (2000::/3).
      ['::2', /IPv4-compatible/],
      ['::7f00:1', /IPv4-compatible/],
      ['::10.0.0.1', /IPv4-compatible/],
      ['::8.8.8.8', /IPv4-compatible/],
      ['100::1', /discard-only/],
      ['100:0:0:1::1', /dummy/],
      ['2001::1', /IETF protocol assignments/],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', /IETF protocol assignments .*Teredo/],
      ['2001:1::1', /IETF protocol assignments/],
      ['2001:2::1', /IETF protocol assignments/],
      ['2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff', /IETF protocol assignments/],
      ['2001:db8::1', /documentation/],
      ['3fff::1', /documentation/],
      ['3fff:fff::1', /documentation/],
      ['5f00::1', /segment routing/],
      ['fec0::1', /site-local/],
      ['4000::1', /outside global unicast/],
      ['e000::1', /outside global unicast/],
      ['1::1', /outside global unicast/],
      // IPv4-translated (::ffff:0:0:0/96) and local-use NAT64 (64:ff9b:1::/48): refused whatever they carry.
      ['::ffff:0:7f00:1', /IPv4-translated/],
      ['::ffff:0:127.0.0.1', /IPv4-translated/],
      ['::ffff:0:a00:1', /IPv4-translated/],
      ['::ffff:0:a9fe:a9fe', /IPv4-translated/],
      ['::ffff:0:8.8.8.8', /IPv4-translated/],
      ['0:0:0:0:ffff:0:c0a8:101', /IPv4-translated/],
      ['64:ff9b:1::a00:1', /local-use IPv4\/IPv6 translation/],
      ['64:ff9b:1::808:808', /local-use IPv4\/IPv6 translation/],
      ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', /local-use IPv4\/IPv6 translation/],
      // Mapped, NAT64 and 6to4 forms of private IPv4, in every spelling.
      ['::FFFF:7F00:1', /loopback, inside an IPv6 address/],
      ['0:0:0:0:0:ffff:7f00:1', /loopback, inside an IPv6 address/],
      ['::ffff:a00:1', /private, inside an IPv6 address/],
      ['::ffff:c0a8:101', /private, inside an IPv6 address/],
      ['::ffff:a9fe:a9fe', /link-local .*inside an IPv6 address/],
      ['::ffff:6440:1', /CGNAT.*inside an IPv6 address/],
      ['64:ff9b::10.0.0.1', /private, inside an IPv6 address/],
      ['64:ff9b::7f00:1', /loopback, inside an IPv6 address/],
      ['64:ff9b::c0a8:101', /private, inside an IPv6 address/],
      ['2002:a00:1::', /private, inside an IPv6 address/],
      ['2002:c0a8:101::1', /private, inside an IPv6 address/],
      ['2002:a9fe:a9fe:1:2:3:4:5', /link-local .*inside an IPv6 address/],
    ];
    for (const [address, why] of forbidden) assert.match(forbiddenAddress(address) ?? 'allowed', why, address);
  });

  it('allows public addresses', () => {
    for (const address of [
      '93.184.215.14',
      '8.8.8.8',
      '1.1.1.1',
      '172.32.0.1',
      '172.15.255.255',
      '100.128.0.1',
      '192.169.0.1',
      '2606:4700::1111',
      '2a00:1450:4001:80b::200e',
      '::ffff:8.8.8.8',
      '::ffff:808:808',
      '64:ff9b::808:808',
      '2002:808:808::1',
      '2001:200::1',
      '2001:4860:4860::8888',
      '2620:4f:8000::1',
      '3fff:1000::1',
      '192.31.196.1',
      '192.52.193.1',
      '192.175.48.1',
    ]) {
      assert.equal(forbiddenAddress(address), undefined, address);
    }
  });

  it('reads URLs as the WHATWG parser does, so that numeric spellings of loopback are caught', async () => {
    for (const text of [
      'http://2130706433/',
      'http://0x7f000001/',
      'http://0177.0.0.1/',
      'http://127.1/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:0:127.0.0.1]/',
      'http://[::ffff:0:7f00:1]/',
      'http://[64:ff9b:1::a00:1]/',
      'http://[64:ff9b::127.0.0.1]/',
      'http://[2001::7f00:1]/',
      'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
      'http://[2002:7f00:1::]/',
      'http://[::7f00:1]/',
    ]) {
      await assert.rejects(checkWebhookUrl(text, { allowPrivate: false }), WebhookUrlError, text);
    }
    assert.equal((await checkWebhookUrl('http://127.0.0.1:9/x', { allowPrivate: true })).port, '9', 'allowed when private networks are allowed');
    assert.throws(() => parseWebhookUrl('mailto:a@b.example'), /absolute http/);
    assert.throws(() => parseWebhookUrl(`https://a.example/${'x'.repeat(2048)}`), /2048/);
  });

  it('checks every address a name resolves to: one private address among public ones refuses it', async () => {
    const resolver = async (): Promise<LookupAddress[]> => [
      { address: '93.184.215.14', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ];
    const mixed = await checkWebhookUrl('https://mixed.example/x', { allowPrivate: false, resolver }).catch((error: unknown) => error);
    assert.ok(mixed instanceof WebhookUrlError);
    assert.equal(mixed.message, 'the host mixed.example is not a public address: webhooks may only reach the public internet');
    assert.deepEqual(mixed.refused, { host: 'mixed.example', address: '10.0.0.7', rule: 'private' });
    const unresolvable = async (): Promise<LookupAddress[]> => {
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    };
    // Refused in the words of an internal name, so that answers cannot tell which internal names exist; why is for the log.
    const nowhere = await checkWebhookUrl('https://nowhere.example/x', { allowPrivate: false, resolver: unresolvable }).catch(
      (error: unknown) => error,
    );
    assert.ok(nowhere instanceof WebhookUrlError);
    assert.equal(nowhere.message, 'the host nowhere.example is not a public address: webhooks may only reach the public internet');
    assert.deepEqual(nowhere.refused, { host: 'nowhere.example', address: '', rule: 'does not resolve (ENOTFOUND)' });
    const empty = await checkWebhookUrl('https://empty.example/x', { allowPrivate: false, resolver: async () => [] }).catch(
      (error: unknown) => error,
    );
    assert.ok(empty instanceof WebhookUrlError);
    assert.equal(empty.message, 'the host empty.example is not a public address: webhooks may only reach the public internet');
  });

  it("the connection's lookup connects to the address it checked, and refuses a name that now resolves privately (DNS rebinding)", async () => {
    let answer = '93.184.215.14';
    const lookups: string[] = [];
    const lookup = guardedLookup(async (host) => {
      lookups.push(host);
      return [{ address: answer, family: 4 }];
    });
    const resolved = await new Promise<{ address: unknown; family: unknown }>((resolve, reject) =>
      lookup('rebind.example', { family: 0 }, (error, address, family) => (error ? reject(error) : resolve({ address, family }))),
    );
    assert.deepEqual(resolved, { address: '93.184.215.14', family: 4 });
    const all = await new Promise<unknown>((resolve, reject) =>
      lookup('rebind.example', { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
    );
    assert.deepEqual(all, [{ address: '93.184.215.14', family: 4 }], 'the form Node asks for with autoSelectFamily');
    answer = '127.0.0.1';
    const refused = await new Promise<NodeJS.ErrnoException | null>((resolve) => lookup('rebind.example', {}, (error) => resolve(error)));
    assert.equal(refused?.code, 'EWEBHOOKFORBIDDEN');
    assert.equal(refused?.message, 'the host rebind.example is not a public address: webhooks may only reach the public internet');
    assert.deepEqual((refused as WebhookUrlError).refused, { host: 'rebind.example', address: '127.0.0.1', rule: 'loopback' });
    assert.equal(lookups.length, 3, 'one resolution per connection, used for the connection itself');
  });
});
