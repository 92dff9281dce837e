import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertError, testApp } from '../helpers.js';

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
