import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { testApp, TOKEN } from '../helpers.js';
import { portOf, rawExchange, type RawAnswer } from './raw-exchange.js';
import { listedCodes, operations, urlOf } from './route-table.js';

/**
 * The request's Host and transfer coding, on every operation of the served document (test/http/route-table.ts):
 * - RFC 9112 3.2: more than one Host line, or a Host that is not `host[:port]`, is 400 (Node kept the first of
 *   several and dropped the rest without a word); a missing Host is 400 in HTTP/1.1 and served in HTTP/1.0;
 * - RFC 9112 6.1: a Transfer-Encoding holding any coding but chunked (`gzip, chunked`) is 501, not handed on
 *   as a body still gzipped.
 * Sent on raw sockets: an HTTP client sends neither.
 */

describe('the Host and Transfer-Encoding of every request', async () => {
  const t = await testApp(after);
  const { operations: list } = await operations(t);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = portOf(t.app.server);

  /** One request of `head` lines (and a body), the connection closed after it. */
  const raw = (requestLine: string, lines: readonly string[], body = ''): Promise<RawAnswer> =>
    rawExchange(port, `${requestLine}\r\n${[...lines, `Authorization: Bearer ${TOKEN}`, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`);

  function error(answer: RawAnswer): { code: string; message: string; field?: string } {
    return JSON.parse(answer.body) as { code: string; message: string; field?: string };
  }

  for (const operation of list) {
    const { method, path } = operation;
    const line = `${method} ${urlOf(operation)} HTTP/1.1`;

    it(`${method} ${path} with two Host lines: 400 header_repeated naming headers.host, listed`, async () => {
      for (const hosts of [
        ['Host: a.example', 'Host: b.example'],
        ['Host: a.example', 'host: a.example'],
      ]) {
        const answer = await raw(line, hosts);
        assert.equal(answer.status, 400, answer.body);
        assert.deepEqual(
          { ...error(answer), message: undefined },
          { ...error(answer), code: 'header_repeated', field: 'headers.host', message: undefined },
        );
        assert.match(error(answer).message, /headers\.host must be sent once, not 2 times/);
      }
      assert.ok(listedCodes(operation, 400).includes('header_repeated'), `${method} ${path} lists header_repeated`);
    });

    it(`${method} ${path} with Expect: x-fast-lane: 417 expectation_unsupported, listed`, async () => {
      const answer = await raw(line, ['Host: x', 'Expect: x-fast-lane']);
      assert.equal(answer.status, 417, answer.body);
      assert.equal(error(answer).code, 'expectation_unsupported');
      assert.ok(listedCodes(operation, 417).includes('expectation_unsupported'), `${method} ${path} lists it`);
    });

    it(`${method} ${path} with Transfer-Encoding: gzip, chunked: 501 transfer_coding_unsupported, listed`, async () => {
      const answer = await raw(line, ['Host: x', 'Content-Type: application/json', 'Transfer-Encoding: gzip, chunked'], '2\r\n{}\r\n0\r\n\r\n');
      assert.equal(answer.status, 501, answer.body);
      assert.equal(error(answer).code, 'transfer_coding_unsupported');
      assert.equal(error(answer).field, 'headers.transfer-encoding');
      assert.match(error(answer).message, /Transfer-Encoding: gzip, chunked is not supported/);
      assert.ok(listedCodes(operation, 501).includes('transfer_coding_unsupported'), `${method} ${path} lists it`);
    });
  }

  for (const host of ['a b', 'a/b', 'x.example:port', '[::1', 'user@x.example', 'x.example:80:80', 'x\u00e9.example']) {
    it(`Host ${JSON.stringify(host)}: 400 invalid_header naming headers.host`, async () => {
      const answer = await raw('GET /plants HTTP/1.1', [`Host: ${host}`]);
      assert.equal(answer.status, 400, answer.body);
      assert.equal(error(answer).code, 'invalid_header');
      assert.equal(error(answer).field, 'headers.host');
      assert.match(error(answer).message, /headers\.host must be a host name or address and an optional port/);
    });
  }

  for (const host of ['x', '127.0.0.1:8080', 'plants.example.com', '[::1]:80', '[2001:db8::1]', 'xn--bcher-kva.example:443', 'x.example:', '']) {
    it(`Host ${JSON.stringify(host)}: served`, async () => {
      assert.equal((await raw('GET /plants HTTP/1.1', [`Host: ${host}`])).status, 200);
    });
  }

  it('no Host: 400 in HTTP/1.1, served in HTTP/1.0', async () => {
    const missing = await raw('GET /plants HTTP/1.1', []);
    assert.equal(missing.status, 400, missing.body);
    assert.equal(error(missing).code, 'invalid_header');
    assert.match(error(missing).message, /Host header is missing/);
    assert.equal((await raw('GET /plants HTTP/1.0', [])).status, 200);
  });

  it('a body chunked alone is read, whatever the case and spaces of the coding', async () => {
    for (const [coding, id] of [
      ['chunked', 41],
      ['Chunked ', 42],
    ] as const) {
      const body = JSON.stringify({ id, name: 'Fern' });
      const answer = await raw(
        'POST /plants HTTP/1.1',
        ['Host: x', 'Content-Type: application/json', `Transfer-Encoding: ${coding}`],
        `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      );
      assert.equal(answer.status, 200, answer.body);
      assert.equal((await t.call('GET', `/plants/${id}`)).statusCode, 200);
    }
  });

  it('a coding refused stores nothing', async () => {
    const body = JSON.stringify({ id: 43, name: 'Fern' });
    for (const coding of ['gzip, chunked', 'identity, chunked', 'x-custom;q=1, chunked']) {
      const answer = await raw(
        'POST /plants HTTP/1.1',
        ['Host: x', 'Content-Type: application/json', `Transfer-Encoding: ${coding}`],
        `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      );
      assert.equal(answer.status, 501, `${coding}: ${answer.body}`);
    }
    assert.equal((await t.call('GET', '/plants/43')).statusCode, 404);
  });
});
