import assert from 'node:assert/strict';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { after, describe, it } from 'node:test';
import { listen } from '../events/sse.js';
import { testApp, TOKEN } from '../helpers.js';

/**
 * A keep-alive client after a refusal of a body it had not finished sending (413, 415, an import's bad row):
 * the connection either serves its next request (a small body of known length, read and dropped), or the
 * answer says `Connection: close` before the service closes it. The answer once left the header out and the
 * connection closed: Node's http.Agent (the default agent since Node 19: axios, got…) and proxies' pools sent
 * the next request on it, to be dropped with ECONNRESET, every time.
 */

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  /** Whether the request went on a connection an earlier request used (Node's documented ClientRequest.reusedSocket). */
  reused: boolean;
}

function send(agent: Agent, origin: string, method: string, path: string, headers: Record<string, string>, body?: Buffer | string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}${path}`, { method, agent, headers: { authorization: `Bearer ${TOKEN}`, ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, reused: req.reusedSocket }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('a keep-alive client after a refused body', async () => {
  const t = await testApp(after, { config: { importBodyLimit: 64 * 2 ** 20 } });
  const origin = await listen(t.app);
  await t.call('POST', '/plants', { body: { id: 1, name: 'Fern' } });

  const kept: Array<[string, string, Record<string, string>, () => Buffer | string, number]> = [
    ['415: a JSON body sent as text/plain', '/plants', { 'content-type': 'text/plain' }, () => '{"id":2,"name":"Ivy"}', 415],
    ['415: a body without a Content-Type', '/plants', {}, () => Buffer.from('{"id":2,"name":"Ivy"}'), 415],
    ['413: a body a little over BODY_LIMIT', '/plants', { 'content-type': 'application/json' }, () => `{"id":2,"name":"${'x'.repeat(70_000)}"}`, 413],
  ];
  for (const [what, path, headers, body, status] of kept) {
    it(`${what}: the connection serves the next request`, async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (let round = 0; round < 5; round++) {
          const refused = await send(agent, origin, 'POST', path, headers, body());
          assert.equal(refused.status, status);
          assert.notEqual(refused.headers.connection, 'close');
          const next = await send(agent, origin, 'GET', '/plants/1', {});
          assert.equal(next.status, 200);
          assert.ok(next.reused, 'on the same connection');
        }
        assert.equal((await t.call('GET', '/plants/2')).statusCode, 404, 'nothing stored');
      } finally {
        agent.destroy();
      }
    });
  }

  const big = Buffer.alloc(3 * 2 ** 20, 0x20);
  const closed: Array<[string, string, Record<string, string>, () => Buffer | string, number]> = [
    ['413: a body far over BODY_LIMIT', '/plants', { 'content-type': 'application/json' }, () => big, 413],
    ['415: a chunked body (its length unknown)', '/plants', { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' }, () => 'x', 415],
    [
      '400: an import refused at its first row, its body still coming',
      '/plants/import',
      { 'content-type': 'application/x-ndjson' },
      () => `{"id":3}\n${'\n'.repeat(3 * 2 ** 20)}`,
      400,
    ],
  ];
  for (const [what, path, headers, body, status] of closed) {
    it(`${what}: the answer says Connection: close, and the next request goes on a new connection`, async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (let round = 0; round < 5; round++) {
          const refused = await send(agent, origin, 'POST', path, headers, body());
          assert.equal(refused.status, status);
          assert.equal(refused.headers.connection, 'close');
          const next = await send(agent, origin, 'GET', '/plants/1', {});
          assert.equal(next.status, 200);
          assert.equal(next.reused, false);
        }
      } finally {
        agent.destroy();
      }
    });
  }
});
