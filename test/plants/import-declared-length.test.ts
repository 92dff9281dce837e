import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, describe, it } from 'node:test';
import { testApp, TOKEN } from '../helpers.js';

/**
 * An import whose Content-Length says more than IMPORT_BODY_LIMIT is refused 413 before a byte of its body is
 * read: with Expect: 100-continue, before the client sends any (it was answered 100, read and staged up to
 * the limit, then refused).
 */
describe('an import whose declared length is over IMPORT_BODY_LIMIT', async () => {
  const limit = 1000;
  const t = await testApp(after, { config: { importBodyLimit: limit } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (t.app.server.address() as { port: number }).port;

  /** Sends the head alone, then reads until the answer's body has come (the 413's JSON). */
  function headOnly(lines: readonly string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('"code":')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(text));
      socket.write(`POST /plants/import HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n${lines.map((line) => `${line}\r\n`).join('')}\r\n`);
    });
  }

  for (const expect of [false, true]) {
    // A timeout: before the fix, the service waited for a body that never comes.
    it(`is 413 at once${expect ? ', with Expect: 100-continue, before any 100 is needed' : ''}, nothing stored`, { timeout: 20_000 }, async () => {
      const answer = await headOnly([
        'Content-Type: application/x-ndjson',
        `Content-Length: ${limit + 1}`,
        ...(expect ? ['Expect: 100-continue'] : []),
      ]);
      const final = answer.slice(answer.lastIndexOf('HTTP/1.1 '));
      assert.match(final, /^HTTP\/1\.1 413 /);
      assert.match(final, /"code":"body_too_large"/);
      assert.match(final, /IMPORT_BODY_LIMIT/);
      assert.equal(await t.store.plants.count(), 0);
    });
  }

  it('a body of the limit exactly is read', async () => {
    const row = '{"id":1,"name":"Fern"}\n';
    const body = row + ' '.repeat(limit - row.length);
    const res = await t.call('POST', '/plants/import', { headers: { 'content-type': 'application/x-ndjson' }, body });
    assert.equal(res.statusCode, 200, res.payload);
  });
});
