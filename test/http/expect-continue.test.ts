import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, describe, it } from 'node:test';
import { testApp, TOKEN } from '../helpers.js';
import { portOf } from './raw-exchange.js';

/**
 * Expect: 100-continue: the body is asked for (100 Continue) only when it will be read. A request refused on
 * its head (no token, a wrong scope, a length over the limit) gets its final answer without a 100, so that the client never uploads a body only to have it refused;
 * one whose body is read gets the 100, then its answer. Node used to answer 100 to every such head.
 */
describe('Expect: 100-continue', async () => {
  const importLimit = 100_000;
  const t = await testApp(after, { bodyLimit: 1024, config: { importBodyLimit: importLimit } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = portOf(t.app.server);
  const readOnly = await t.tokenWith('plants:read');

  /**
   * Sends the head alone, then the body only if the server answers 100; every status line that came back,
   * once the server closed the connection (the head says Connection: close), and the last answer's text.
   */
  function exchange(head: string, body: string): Promise<{ statuses: number[]; last: string }> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      let sent = false;
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        text += chunk;
        if (!sent && text.startsWith('HTTP/1.1 100 ') && text.includes('\r\n\r\n')) {
          sent = true;
          socket.write(body);
        }
      });
      socket.on('error', reject);
      socket.on('close', () => {
        const statuses = [...text.matchAll(/^HTTP\/1\.1 (\d{3}) /gm)].map((match) => Number(match[1]));
        resolve({ statuses, last: text.slice(text.lastIndexOf('HTTP/1.1 ')) });
      });
      socket.write(`${head}Host: x\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
    });
  }
  const plant = (id: number) => JSON.stringify({ id, name: 'Fern' });
  const json = 'Content-Type: application/json\r\n';
  const auth = (token: string) => `Authorization: Bearer ${token}\r\n`;

  for (const [what, head, body, status] of [
    ['no token', `POST /plants HTTP/1.1\r\n${json}`, plant(1), 401],
    ['a token without the scope', `POST /plants HTTP/1.1\r\n${json}${auth(readOnly)}`, plant(2), 403],
    ['a length over the limit', `POST /plants HTTP/1.1\r\n${json}${auth(TOKEN)}`, JSON.stringify({ id: 4, name: 'x'.repeat(2000) }), 413],
    [
      'an import over its own limit',
      `POST /plants/import HTTP/1.1\r\nContent-Type: application/x-ndjson\r\n${auth(TOKEN)}`,
      'x'.repeat(importLimit + 1),
      413,
    ],
  ] as const) {
    it(`${what}: ${status} at once, without a 100, nothing stored`, async () => {
      const { statuses, last } = await exchange(head, body);
      assert.deepEqual(statuses, [status], last);
      assert.match(last, /"code":"/);
    });
  }

  for (const [what, head, body, status] of [
    ['POST /plants', `POST /plants HTTP/1.1\r\n${json}${auth(TOKEN)}`, plant(10), 200],
    ['PUT /plants/{id}', `PUT /plants/11 HTTP/1.1\r\nContent-Type: application/json; charset=utf-8\r\n${auth(TOKEN)}`, '{"name":"Ivy"}', 201],
    ['PATCH /plants/{id}', `PATCH /plants/10 HTTP/1.1\r\nContent-Type: application/merge-patch+json\r\n${auth(TOKEN)}`, '{"tag":"shade"}', 200],
    [
      'an import within its limit, over BODY_LIMIT',
      `POST /plants/import HTTP/1.1\r\nContent-Type: application/x-ndjson\r\n${auth(TOKEN)}`,
      `${plant(12)}\n${' '.repeat(2000)}\n`,
      200,
    ],
    ['a body read to be refused (invalid JSON)', `POST /plants HTTP/1.1\r\n${json}${auth(TOKEN)}`, '{"id":', 400],
    // As Node answered them: what Fastify reads of them is not known before (a 404's JSON body is read).
    ['a media type the operation does not take', `POST /plants HTTP/1.1\r\nContent-Type: text/plain\r\n${auth(TOKEN)}`, plant(3), 415],
    ['no such route', `POST /nowhere HTTP/1.1\r\n${json}${auth(TOKEN)}`, plant(5), 404],
    ['a method the path does not take', `POST /plants/6 HTTP/1.1\r\n${json}${auth(TOKEN)}`, plant(6), 405],
    ['an operation without a body, sent one', `DELETE /plants/7 HTTP/1.1\r\n${json}${auth(TOKEN)}`, '{}', 404],
  ] as const) {
    it(`${what}: 100, then the body: ${status}`, async () => {
      const { statuses, last } = await exchange(head, body);
      assert.deepEqual(statuses, [100, status], last);
    });
  }

  it('stored what it read, and nothing it refused', async () => {
    const ids = (await t.call('GET', '/plants')).json<Array<{ id: number }>>().map((p) => p.id);
    assert.deepEqual(ids, [10, 11, 12]);
  });
});
