import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { after, describe, it } from 'node:test';
import { assertError, testApp } from '../helpers.js';

/**
 * Registering a URL waits for its host's DNS lookup (the network guard), at most WEBHOOK_DNS_TIMEOUT_MS:
 * a resolver that never answers held the request (and its connection) as long as it did not. Past the
 * bound the answer is 503 with Retry-After, nothing registered; a name that does not exist stays a 400.
 * Each test's own wait is bounded (its `timeout`): before the bound, the request hung.
 */
describe('the DNS lookup of a webhook URL is bounded (WEBHOOK_DNS_TIMEOUT_MS)', async () => {
  /** Hosts whose lookup never answers, until let go. */
  const hanging = new Set(['hang.example']);
  const resolver = (host: string): Promise<LookupAddress[]> => {
    if (hanging.has(host)) return new Promise(() => {});
    if (host === 'nowhere.example') return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
    return Promise.resolve([{ address: '93.184.215.14', family: 4 }]);
  };
  const t = await testApp(after, { config: { webhookDnsTimeoutMs: 100 }, webhookResolver: resolver });
  const bounded = { timeout: 20_000 };

  it('POST /webhooks: 503 with Retry-After naming body.url, nothing registered', bounded, async () => {
    const before = (await t.call('GET', '/webhooks?limit=1000')).json<unknown[]>().length;
    const answer = await t.call('POST', '/webhooks', { body: { url: 'https://hang.example/hooks' } });
    const message = assertError(answer, 503, 'hang.example', 'webhook_host_lookup_timeout');
    assert.match(message, /did not answer within 100 ms/);
    assert.equal(answer.json<{ field: string }>().field, 'body.url');
    assert.equal(answer.headers['retry-after'], '1');
    assert.equal((await t.call('GET', '/webhooks?limit=1000')).json<unknown[]>().length, before, 'nothing registered');
  });

  it('with an Idempotency-Key nothing is kept: the retry, once the resolver answers, registers it', bounded, async () => {
    const headers = { 'idempotency-key': 'lookup-timeout-1' };
    const body = { url: 'https://hang.example/keyed' };
    assertError(await t.call('POST', '/webhooks', { body, headers }), 503, undefined, 'webhook_host_lookup_timeout');
    hanging.delete('hang.example');
    try {
      const retried = await t.call('POST', '/webhooks', { body, headers });
      assert.equal(retried.statusCode, 201, retried.payload);
      assert.equal(retried.headers['idempotent-replayed'], undefined);
    } finally {
      hanging.add('hang.example');
    }
  });

  it('PATCH with a new url: 503 too, the endpoint unchanged', bounded, async () => {
    const created = await t.call('POST', '/webhooks', { body: { url: 'https://shop.example/hooks' } });
    assert.equal(created.statusCode, 201, created.payload);
    const url = `/webhooks/${created.json<{ id: string }>().id}`;
    assertError(await t.call('PATCH', url, { body: { url: 'https://hang.example/hooks' } }), 503, 'hang.example', 'webhook_host_lookup_timeout');
    assert.equal((await t.call('GET', url)).json<{ url: string }>().url, 'https://shop.example/hooks');
  });

  it('a host that does not exist (NXDOMAIN) stays a 400 naming body.url', bounded, async () => {
    const answer = await t.call('POST', '/webhooks', { body: { url: 'https://nowhere.example/hooks' } });
    assertError(answer, 400, 'is not a public address', 'invalid_webhook_url');
    assert.equal(answer.json<{ field: string }>().field, 'body.url');
  });
});
