import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createLogger } from '../../src/logging/logger.js';
import { assertError, testApp } from '../helpers.js';
import { LogSink } from '../log-sink.js';

/** What a registered URL becomes: the WHATWG parser's normalised `href`, stored and shown, never the text as sent. */
describe('webhook URLs are stored as the WHATWG parser normalises them', async () => {
  const t = await testApp(after);
  // Public IP literals: no DNS needed.
  const normalised: Array<[string, string]> = [
    ['https://93.184.215.14/a\r\nb', 'https://93.184.215.14/ab'],
    ['https://93.184.215.14/hooks\n', 'https://93.184.215.14/hooks'],
    ['https://93.184.215.14/hoo\tks', 'https://93.184.215.14/hooks'],
    ['https://93.184.\r\n215.14/x', 'https://93.184.215.14/x'],
    [' \u0001https://93.184.215.14/x \u001f', 'https://93.184.215.14/x'],
    ['HTTPS://93.184.215.14:443/a b?q=1 2#frag', 'https://93.184.215.14/a%20b?q=1%202#frag'],
    ['https://93.184.215.14\\hooks\\plants', 'https://93.184.215.14/hooks/plants'],
    ['https://93.184.215.14/é"<>`', 'https://93.184.215.14/%C3%A9%22%3C%3E%60'],
    ['https://93.184.215.14/a\u0000b', 'https://93.184.215.14/a%00b'],
    ['https://0x5d.0xb8.0xd7.0x0e/x', 'https://93.184.215.14/x'],
    ['https://1572394766/x', 'https://93.184.215.14/x'],
    ['http://[2606:4700:0000::1111]:80/x/../y', 'http://[2606:4700::1111]/y'],
    ['https://93.184.215.14', 'https://93.184.215.14/'],
  ];

  for (const [sent, stored] of normalised) {
    it(`${JSON.stringify(sent)} is stored, echoed and listed as ${stored}`, async () => {
      const created = await t.call('POST', '/webhooks', { body: { url: sent } });
      assert.equal(created.statusCode, 201, created.payload);
      const { id, url } = created.json<{ id: string; url: string }>();
      assert.equal(url, stored, 'the answer echoes the normalised URL');
      assert.equal((await t.store.webhooks.getEndpoint(id))?.url, stored, 'the store holds the normalised URL');
      assert.equal((await t.call('GET', `/webhooks/${id}`)).json().url, stored);
      const listed = (await t.call('GET', '/webhooks?limit=1000')).json<Array<{ id: string; url: string }>>();
      assert.equal(listed.find((endpoint) => endpoint.id === id)?.url, stored);
    });
  }

  it('PATCH stores the normalised URL too', async () => {
    const { id } = (await t.call('POST', '/webhooks', { body: { url: 'https://93.184.215.14/first' } })).json<{ id: string }>();
    const patched = await t.call('PATCH', `/webhooks/${id}`, { body: { url: 'https://93.184.215.15/sec\r\nond\t' } });
    assert.equal(patched.statusCode, 200, patched.payload);
    assert.equal(patched.json().url, 'https://93.184.215.15/second');
    assert.equal((await t.store.webhooks.getEndpoint(id))?.url, 'https://93.184.215.15/second');
  });

  it('a URL whose normalised form is over 2048 characters is refused, naming body.url', async () => {
    // 1,000 spaces are 1,000 characters as sent and 3,000 as %20.
    const message = assertError(await t.call('POST', '/webhooks', { body: { url: `https://93.184.215.14/${' '.repeat(1000)}x` } }), 400, 'body.url');
    assert.match(message, /2048/);
  });
});

describe('a refused URL is "not a public address" in the answer; the address and the rule go to the log only', async () => {
  const sink = new LogSink();
  const t = await testApp(after, { logger: createLogger('info', sink) });
  // localhost resolves (from /etc/hosts) to a loopback address: the internal address a name stands for.
  const refused: Array<[string, string]> = [
    ['http://localhost:9/x', 'localhost'],
    ['http://LocalHost:80/x', 'localhost'],
    ['http://10.0.0.5/x', '10.0.0.5'],
    ['http://[::ffff:169.254.169.254]/latest', '::ffff:a9fe:a9fe'],
    ['http://[64:ff9b:1::a00:1]/x', '64:ff9b:1::a00:1'],
  ];
  for (const [url, host] of refused) {
    it(`${url}: 400 naming the host, never what it resolves to`, async () => {
      sink.text = '';
      for (const res of [
        await t.call('POST', '/webhooks', { body: { url } }),
        await t.call('PATCH', `/webhooks/${(await t.call('POST', '/webhooks', { body: { url: 'https://93.184.215.14/x' } })).json().id}`, {
          body: { url },
        }),
      ]) {
        const message = assertError(res, 400, 'body.url');
        // The setting that would allow it is named: a developer with a receiver on this machine knows what to set.
        assert.equal(
          message,
          `body.url the host ${host} is not a public address: webhooks may only reach the public internet; ` +
            'WEBHOOK_ALLOW_PRIVATE_NETWORKS=true allows it, for development only',
        );
        for (const detail of ['127.0.0.1', '::1', 'loopback', 'private', 'link-local', 'translation', 'resolves']) {
          assert.ok(!message.includes(detail), `the answer names "${detail}": ${message}`);
        }
      }
      const logged = sink.lines().filter((line) => line.msg === 'webhooks: URL refused: not a public address');
      assert.equal(logged.length, 2, sink.text);
      for (const line of logged) {
        assert.equal(line.level, 40, 'a warning');
        assert.equal(line.host, host);
        assert.equal(typeof line.address, 'string');
        assert.match(String(line.rule), /loopback|private|link-local|translation/);
        assert.equal(typeof line.reqId, 'string');
      }
      if (host === 'localhost') assert.ok(['127.0.0.1', '::1'].includes(String(logged[0]!.address)), sink.text);
    });
  }

  it('answers a name that does not resolve in the words of an internal one: the answers are no oracle for internal names', async () => {
    sink.text = '';
    // .invalid never resolves (RFC 6761); localhost is the internal name every host has.
    const [internal, unknown] = await Promise.all(
      ['http://localhost/x', 'http://no-such-host.invalid/x'].map(async (url) =>
        assertError(await t.call('POST', '/webhooks', { body: { url } }), 400),
      ),
    );
    assert.equal(internal!.replace('localhost', 'HOST'), unknown!.replace('no-such-host.invalid', 'HOST'));
    const logged = sink.lines().find((line) => line.msg === 'webhooks: URL refused: not a public address' && line.host === 'no-such-host.invalid');
    assert.ok(logged, sink.text);
    assert.match(String(logged.rule), /^does not resolve \(E[A-Z_]+\)$/, 'the log says why');
  });
});
