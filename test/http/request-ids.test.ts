import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createLogger } from '../../src/logging/logger.js';
import { testApp } from '../helpers.js';
import { LogSink } from '../log-sink.js';
import { portOf, rawExchange, type RawAnswer } from './raw-exchange.js';

/**
 * Every answer carries X-Request-Id (docs/api.md), and the log line of its request names it (`reqId`), so
 * that an operator handed an answer finds its line: the requests Node's parser refuses, answered on the
 * socket before any request object exists (431, 414, an unknown method, a line that is no request line,
 * CONNECT), and those Fastify answers outside its hooks (a path not validly percent-encoded, an id past the
 * longest), included.
 */

const sink = new LogSink();
const t = await testApp(after, { logger: createLogger('info', sink) });
await t.app.listen({ port: 0, host: '127.0.0.1' });
const port = portOf(t.app.server);
const raw = (text: string) => rawExchange(port, text);

const REQUEST_ID = /^x-request-id: ([0-9a-z]+-[0-9a-z]+)$/im;

function requestIdOf(answer: RawAnswer): string {
  const id = REQUEST_ID.exec(answer.head)?.[1];
  assert.ok(id !== undefined, `an X-Request-Id in ${answer.head}`);
  return id;
}

/** The log lines naming this request id. */
const linesOf = (id: string) => sink.lines().filter((line) => line.reqId === id);

describe('the request id of answers written on the socket (Node’s parser refused the request)', () => {
  const refusals: Array<[string, string, number]> = [
    ['headers too large', `GET /plants HTTP/1.1\r\nHost: x\r\nX-Long: ${'a'.repeat(17_000)}\r\n\r\n`, 431],
    ['a URL too long', `GET /plants?q=${'a'.repeat(17_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 414],
    ['an unknown method', 'FOO /plants HTTP/1.1\r\nHost: x\r\n\r\n', 501],
    ['no request line', 'HELLO THERE\r\n\r\n', 400],
  ];
  for (const [what, text, status] of refusals) {
    it(`${what}: ${status}, with an X-Request-Id its log line names`, async () => {
      const answer = await raw(text);
      assert.equal(answer.status, status, answer.head);
      const id = requestIdOf(answer);
      const [line] = linesOf(id);
      assert.ok(line, `a log line with reqId ${id}: ${sink.text}`);
      assert.equal(line.status, status);
    });
  }

  it('CONNECT: 405 with an X-Request-Id', async () => {
    const answer = await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    assert.equal(answer.status, 405, answer.head);
    requestIdOf(answer);
  });

  it('the ids are the app’s own sequence: each one new', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(requestIdOf(await raw('HELLO THERE\r\n\r\n')));
    ids.push(requestIdOf(await raw('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')));
    assert.equal(new Set(ids).size, ids.length, ids.join(' '));
  });
});

describe('the request id of answers Fastify writes outside its hooks (a URL its router cannot read)', () => {
  for (const [what, url] of [
    ['a path not validly percent-encoded', '/plants/%zz'],
    ['an id past the longest', `/plants/${'1'.repeat(300)}`],
  ] as const) {
    it(`${what}: 400 with an X-Request-Id, and its access line`, async () => {
      const answer = await raw(`GET ${url} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      assert.equal(answer.status, 400, answer.head);
      const id = requestIdOf(answer);
      const access = linesOf(id).filter((line) => line.msg === 'request');
      assert.equal(access.length, 1, `one access line with reqId ${id}: ${sink.text}`);
      assert.equal(access[0]!.status, 400);
      assert.equal(access[0]!.url, url);
    });
  }
});
