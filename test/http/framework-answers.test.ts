import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import { VERSION } from '../../src/version.js';
import { testApp, TOKEN, assertErrorShape } from '../helpers.js';
import { exchange, parseAnswers, request, type RawAnswer } from '../reliability/raw-http.js';
import { until } from '../toolkit.js';

/**
 * Every way Node's HTTP server or Fastify can answer a request on its own, before or around any route,
 * driven over raw sockets against a listening app (inject goes around Node's parser and server): each
 * answer is the API's Error, `{"error": <status>, "message": …}`, never Node's empty answers nor Fastify's
 * `{"statusCode", "error": "<phrase>", "message"}`.
 */

/** The Error shape, and this status. */
function assertError(answer: RawAnswer | undefined, status: number, what: string): void {
  assert.ok(answer, `${what}: no answer at all`);
  assert.equal(answer.status, status, `${what}: ${answer.status} ${answer.body}`);
  assert.match(answer.headers['content-type'] ?? '', /^application\/json\b/, `${what}: content-type`);
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  assertErrorShape(body, status);
  assert.equal(body.error, status, what);
  assert.equal(typeof body.message, 'string', what);
}

const auth = { authorization: `Bearer ${TOKEN}` };
const json = { ...auth, 'content-type': 'application/json' };

describe('answers the framework and Node make on their own', async () => {
  const t = await testApp(after, { bodyLimit: 1024, config: { headersTimeoutMs: 400, requestTimeoutMs: 800 } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (t.app.server.address() as { port: number }).port;
  const first = async (chunks: Array<string | Buffer>, options?: Parameters<typeof exchange>[2]) =>
    (await exchange(port, chunks, { waitMs: 10_000, ...options })).answers[0];

  const cases: Array<[string, Array<string | Buffer>, number]> = [
    // Node's parser (llhttp), before any request object exists: the server's clientError.
    ['a request line that is not HTTP', ['HELLO THERE\r\n\r\n'], 400],
    ['the HTTP/2 preface', ['PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'], 400],
    ['an HTTP version this server does not speak', ['GET /healthz HTTP/1.2\r\nHost: x\r\n\r\n'], 400],
    // RFC 9110 9.1: 501 for a method not known, named (http/transport.ts); a line that is no request line stays 400.
    ['a method Node does not know', ['FOO /healthz HTTP/1.1\r\nHost: x\r\n\r\n'], 501],
    ['headers larger than Node takes', [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`], 431],
    // RFC 9112 3: a target longer than the server parses is 414; Node names it a header overflow too.
    ['a URL longer than Node takes', [`GET /plants?q=${'a'.repeat(17_000)} HTTP/1.1\r\nHost: x\r\n\r\n`], 414],
    ['a header name with a space', ['GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n'], 400],
    ['a Content-Length that is not a number', ['POST /plants HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n'], 400],
    [
      'both Content-Length and Transfer-Encoding',
      ['POST /plants HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
      400,
    ],
    ['a chunk size that is not hexadecimal', [request('POST', '/plants', { ...json, 'transfer-encoding': 'chunked' }, 'zz\r\n{}\r\n0\r\n\r\n')], 400],
    // Node's server, answering itself unless told otherwise.
    ['an Expect other than 100-continue', ['GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n'], 417],
    ['CONNECT', ['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'], 405],
    // Fastify's router and its 404.
    ['a URL whose percent-encoding is broken', ['GET /plants/%E0%A4%A HTTP/1.1\r\nHost: x\r\n\r\n'], 400],
    ['a path id longer than the router takes (the id rule)', [`GET /plants/${'1'.repeat(300)} HTTP/1.1\r\nHost: x\r\n\r\n`], 400],
    ['no such route', ['GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n'], 404],
    ['a method the route does not take', ['TRACE /healthz HTTP/1.1\r\nHost: x\r\n\r\n'], 405],
    ['OPTIONS, which no route takes', ['OPTIONS /plants HTTP/1.1\r\nHost: x\r\n\r\n'], 405],
    [
      'a body method Fastify reads the body of, on no route, without Content-Type',
      ['QUERY /plants HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}'],
      405,
    ],
    // Fastify's body parsing.
    ['a body over BODY_LIMIT', [request('POST', '/plants', json, `{"id":1,"name":"${'n'.repeat(2000)}"}`)], 413],
    [
      'a body over BODY_LIMIT, chunked',
      [request('POST', '/plants', { ...json, 'transfer-encoding': 'chunked' }, `7d0\r\n${'x'.repeat(2000)}\r\n0\r\n\r\n`)],
      413,
    ],
    ['a media type no route takes', [request('POST', '/plants', { ...auth, 'content-type': 'text/plain' }, 'hello')], 415],
    ['a Content-Type that is not a media type', [request('POST', '/plants', { ...auth, 'content-type': '///' }, '{}')], 415],
    ['an empty JSON body', [request('POST', '/plants', json, '')], 400],
    ['JSON that does not parse', [request('POST', '/plants', json, '{"id":')], 400],
    [
      'a Content-Length larger than the body sent, then the client ends',
      [
        'POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ' +
          TOKEN +
          '\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"id":1}',
      ],
      400,
    ],
  ];
  for (const [what, chunks, status] of cases) {
    test(`${what}: ${status} in the Error shape`, async () => assertError(await first(chunks), status, what));
  }

  test('an Expect other than 100-continue: 417 through the pipeline, with its request id, as problem details when asked, then the connection closes', async () => {
    const plain = await first(['POST /plants HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n']);
    assertError(plain, 417, 'Expect: teapot');
    assert.match(plain!.headers['x-request-id'] ?? '', /\S/, 'a request id');
    assert.equal(plain!.headers.connection, 'close');
    assert.equal((JSON.parse(plain!.body) as { field: string }).field, 'headers.expect');
    const problem = await first(['GET /plants HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nAccept: application/problem+json\r\n\r\n']);
    assert.equal(problem?.status, 417);
    assert.match(problem.headers['content-type'] ?? '', /^application\/problem\+json/);
    // 100-continue, in any case and beside another token Node reads it in, is met: a GET, which reads no body,
    // is answered without a 100 (test/http/expect-continue.test.ts: a 100 only when the body is read).
    const { answers } = await exchange(port, [`GET /plants HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`], {
      waitMs: 10_000,
    });
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200],
    );
  });

  test('headers not all received within HEADERS_TIMEOUT_MS: 408 in the Error shape', async () => {
    assertError(await first(['GET /healthz HTTP/1.1\r\nHost: x\r\n'], { end: false }), 408, 'slow headers');
  });

  test('a body not all received within REQUEST_TIMEOUT_MS: 408 in the Error shape', async () => {
    const head = `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`;
    assertError(await first([`${head}{"id":`], { end: false }), 408, 'slow body');
  });

  test('an Upgrade no one takes is an ordinary request', async () => {
    const answer = await first(['GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n']);
    assert.equal(answer?.status, 200, answer?.body);
  });

  test('a client that leaves in the middle of a body: nothing answered to it, and the next client is served', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(request('POST', '/plants', { ...json, 'content-length': '100' }).toString('latin1') + '{"id":1,');
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    const answer = await first([request('GET', '/healthz', {})]);
    assert.equal(answer?.status, 200, answer?.body);
  });
});

/** Opens a connection and sends `text`; resolves once connected. */
async function open(port: number, text: string): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(text);
  return { socket, received: () => received, closed };
}

describe('while the app closes', () => {
  test("a request that arrives on an open connection is served, with Connection: close, not refused with Fastify's own 503", async () => {
    const t = await testApp(after);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as { port: number }).port;
    // Half a request's headers: the connection is busy, so closing does not end it.
    const client = await open(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const closing = t.app.close();
    await until(() => !t.app.server.listening, 'the listener to close');
    client.socket.write('\r\n');
    await client.closed;
    const [answer, ...more] = parseAnswers(client.received());
    assert.equal(answer?.status, 200, client.received());
    assert.deepEqual(JSON.parse(answer.body), { status: 'ok', version: VERSION });
    assert.equal(answer.headers.connection, 'close');
    assert.deepEqual(more, []);
    await closing;
  });
});

describe('an app told it is stopping', () => {
  test('leaving: /readyz answers 503 in the Error shape, everything else is served, every answer says Connection: close', async () => {
    const t = await testApp(after);
    assert.equal((await t.call('GET', '/readyz', { token: null })).statusCode, 200);
    t.app.stopping({ leaving: true });
    const ready = await t.call('GET', '/readyz', { token: null });
    assert.equal(ready.statusCode, 503);
    assertErrorShape(ready.json(), 503, 'stopping');
    assert.match(ready.json<{ message: string }>().message, /stopping/);
    assert.equal(ready.headers.connection, 'close');
    const health = await t.call('GET', '/healthz', { token: null });
    assert.equal(health.statusCode, 200);
    assert.equal(health.headers.connection, 'close');
    const created = await t.call('POST', '/plants', { body: { id: 1, name: 'served while leaving' } });
    assert.equal(created.statusCode, 200, created.payload);
    assert.equal(created.headers.connection, 'close');
  });

  test('handing over (a reload): answers say Connection: close, /readyz stays ready', async () => {
    const t = await testApp(after);
    t.app.stopping({ leaving: false });
    const ready = await t.call('GET', '/readyz', { token: null });
    assert.equal(ready.statusCode, 200, ready.payload);
    assert.equal(ready.headers.connection, 'close');
  });
});
