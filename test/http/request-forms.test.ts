import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { testApp, TOKEN } from '../helpers.js';
import { portOf, rawExchange } from './raw-exchange.js';

/**
 * What a request's first line and header block may be, sent on raw sockets (no HTTP client sends these):
 * - a target that is neither a path nor an absolute URL is 400 (the router served `*plants/6` as
 *   `/plants/6`); an absolute-form target is served as its path, and what is built from it (a next page's
 *   Link) names no host the client wrote;
 * - header fields past Node's count (2,000 lines) are read, not dropped: a stale If-Match there is 412;
 * - an answer written on the socket itself (a request Node cannot parse) has a Date, as every answer does.
 */

describe('request targets, header counts and answers written on the socket', async () => {
  const t = await testApp(after);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = portOf(t.app.server);
  for (const id of [1, 2, 3, 6]) await t.call('POST', '/plants', { body: { id, name: `Plant ${id}` } });

  const raw = (text: string) => rawExchange(port, text);
  const request = (line: string, headers: readonly string[] = [], body = '') =>
    raw(`${line}\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nConnection: close\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n${body}`);

  for (const line of ['GET *plants HTTP/1.1', 'DELETE *plants/6 HTTP/1.1', 'GET *tokens HTTP/1.1', 'GET * HTTP/1.1']) {
    it(`${line}: 400 invalid_request, not served as a path`, async () => {
      const answer = await request(line);
      assert.equal(answer.status, 400, answer.body);
      const error = JSON.parse(answer.body) as { code: string; message: string };
      assert.equal(error.code, 'invalid_request');
      assert.match(error.message, /is not a path: send one that starts with \//);
    });
  }

  it('nothing was deleted by DELETE *plants/6', async () => {
    assert.equal((await t.call('GET', '/plants/6')).statusCode, 200);
  });

  it('an absolute-form target is served as its path; the next page Link names the path alone', async () => {
    const answer = await request('GET http://evil.example/plants?limit=1 HTTP/1.1');
    assert.equal(answer.status, 200, answer.body);
    assert.deepEqual(
      (JSON.parse(answer.body) as Array<{ id: number }>).map((plant) => plant.id),
      [1],
    );
    const link = /^link: (.*)$/im.exec(answer.head)?.[1] ?? '';
    assert.match(link, /^<\/plants\?limit=1&cursor=[^>]+>; rel="next"/);
    assert.doesNotMatch(answer.head, /evil\.example/);
    const item = await request('GET HTTPS://x.example:8443/plants/2 HTTP/1.1');
    assert.equal(item.status, 200, item.body);
    const root = await request('GET http://x.example HTTP/1.1');
    assert.equal(root.status, 200, root.body);
  });

  it('a stale If-Match after 2,100 header fields is read: 412, nothing changed', async () => {
    const filler = Array.from({ length: 2100 }, (_, i) => `x${i}: 1`);
    const body = '{"name":"Overwritten"}';
    const answer = await request(
      'PUT /plants/3 HTTP/1.1',
      [...filler, 'If-Match: "999999"', 'Content-Type: application/json', `Content-Length: ${body.length}`],
      body,
    );
    assert.equal(answer.status, 412, answer.body);
    assert.equal((await t.call('GET', '/plants/3')).json<{ name: string }>().name, 'Plant 3');
  });

  it('a second Authorization after 2,100 header fields is refused as sent twice', async () => {
    const filler = Array.from({ length: 2100 }, (_, i) => `x${i}: 1`);
    const answer = await request('GET /plants/1 HTTP/1.1', [...filler, 'Authorization: Bearer someone-else-entirely-0123456789']);
    assert.equal(answer.status, 400, answer.body);
    assert.equal((JSON.parse(answer.body) as { code: string }).code, 'header_repeated');
  });

  for (const [what, text] of [
    ['a request line Node cannot parse', 'FOO\r\n\r\n'],
    ['CONNECT', 'CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n'],
    ['a header line over 16 KiB', `GET /plants HTTP/1.1\r\nHost: x\r\nx: ${'a'.repeat(17_000)}\r\n\r\n`],
  ] as const) {
    it(`${what}: the answer written on the socket has a Date`, async () => {
      const answer = await raw(text);
      assert.ok(answer.status >= 400, answer.head);
      const date = /^date: (.*)$/im.exec(answer.head)?.[1];
      assert.ok(date !== undefined, answer.head);
      assert.ok(Math.abs(Date.parse(date) - Date.now()) < 60_000, date);
    });
  }

  for (const [line, what] of [
    ['DELETE /plants/2 HTTP/1.1', 'DELETE'],
    ['DELETE /plants/424242 HTTP/1.1', 'DELETE of no plant'],
  ] as const) {
    it(`${what} with an empty chunked body and no Content-Type: served as without a body`, async () => {
      const answer = await request(line, ['Transfer-Encoding: chunked'], '0\r\n\r\n');
      assert.equal(answer.status, what === 'DELETE' ? 204 : 404, answer.body);
    });
  }

  it('a bodiless operation sent a chunked body that holds bytes: 415, nothing done', async () => {
    const answer = await request('DELETE /plants/1 HTTP/1.1', ['Transfer-Encoding: chunked', 'Content-Type: text/plain'], '1\r\nx\r\n0\r\n\r\n');
    assert.equal(answer.status, 415, answer.body);
    const bare = await request('DELETE /plants/1 HTTP/1.1', ['Transfer-Encoding: chunked'], '1\r\nx\r\n0\r\n\r\n');
    assert.equal(bare.status, 415, bare.body);
    assert.equal((await t.call('GET', '/plants/1')).statusCode, 200);
  });

  for (const [line, method] of [
    ['get /plants HTTP/1.1', 'get'],
    ['BREW /plants HTTP/1.1', 'BREW'],
  ] as const) {
    it(`${line}: 501 method_unknown naming the method, in the Error shape`, async () => {
      const answer = await raw(`${line}\r\nHost: x\r\n\r\n`);
      assert.equal(answer.status, 501, answer.head);
      const error = JSON.parse(answer.body) as { code: string; message: string };
      assert.equal(error.code, 'method_unknown');
      assert.equal(
        error.message,
        `method ${method} is not one this service knows: methods are case-sensitive (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS)`,
      );
    });
  }

  it('a method Node does not know after a request on the same connection: the first is answered, and no refusal names its method', async () => {
    const answer = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nBREW /plants HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.match(answer.head, /^HTTP\/1\.1 200 /);
    // Node 20 writes the 501 after the first answer; Node 24 closes the connection after it without one.
    // Either way, a refusal never takes the method of the request before it (the packet holds both).
    assert.doesNotMatch(answer.body, /method GET is not/);
    if (answer.body.includes('"code":"method_unknown"')) assert.match(answer.body, /method BREW is not one this service knows/);
  });

  it('a URL of 100 kB, still being sent when refused: the client reads the 414 (the connection is not reset under it)', async () => {
    const answer = await raw(`GET /plants?q=${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.equal(answer.status, 414, answer.head);
    const error = JSON.parse(answer.body) as { code: string; message: string };
    assert.equal(error.code, 'uri_too_long');
    assert.equal(error.message, 'the request URL is too long: the request line and headers together may hold 16 KiB');
  });

  it('a long header field is 431 headers_too_large, and a long URL after a whole request 414', async () => {
    const header = await raw(`GET /plants HTTP/1.1\r\nHost: x\r\nX-Long: ${'a'.repeat(17_000)}\r\n\r\n`);
    assert.equal(header.status, 431, header.head);
    assert.equal((JSON.parse(header.body) as { code: string }).code, 'headers_too_large');
    const url = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /plants?q=${'a'.repeat(17_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.match(url.head, /^HTTP\/1\.1 200 /);
    assert.match(url.body, /HTTP\/1\.1 414 URI Too Long\r\n[^]*"code":"uri_too_long"/);
  });

  it('a line that is no request line at all stays 400 invalid_request', async () => {
    const answer = await raw('HELLO THERE\r\n\r\n');
    assert.equal(answer.status, 400, answer.body);
    assert.equal((JSON.parse(answer.body) as { code: string }).code, 'invalid_request');
  });
});
