import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, describe, it } from 'node:test';
import { listen } from '../events/sse.js';
import { testApp, TOKEN } from '../helpers.js';

/**
 * An Idempotency-Key sent twice is refused, 400 naming the header, before anything is done: Node joins a
 * header it does not know, sent twice, into one value ("a, b"), which would otherwise be one key of
 * neither. A real connection (inject cannot send a header twice); the header once, with a comma, is one key.
 */

/** A POST over a connection of its own, its header lines exactly as given; the answer's status and body. */
function post(origin: string, path: string, headerLines: string[], body: string): Promise<{ status: number; body: string }> {
  return send(origin, 'POST', path, headerLines, body);
}

/** A request over a connection of its own, its header lines exactly as given (inject may merge them); the answer's status and body. */
async function send(origin: string, method: string, path: string, headerLines: string[], body = ''): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(origin);
  const socket = connect(Number(port), hostname);
  const head = [
    `${method} ${path} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    'Connection: close',
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...headerLines,
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  let text = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  await new Promise<void>((resolve, reject) => socket.once('close', () => resolve()).once('error', reject));
  const [top = '', rest = ''] = text.split('\r\n\r\n', 2);
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(top)?.[1]), body: rest };
}

const AUTH = `Authorization: Bearer ${TOKEN}`;
const REFUSED = /^headers\.idempotency-key must be sent once, not 2 times/;

function assertRefused(answer: { status: number; body: string }, times = 2): void {
  assert.equal(answer.status, 400, answer.body);
  const error = JSON.parse(answer.body) as { error: number; message: string };
  assert.equal(error.error, 400);
  assert.match(error.message, times === 2 ? REFUSED : new RegExp(`^headers\\.idempotency-key must be sent once, not ${times} times`));
}

describe('an Idempotency-Key sent more than once', async () => {
  const t = await testApp(after);
  const origin = await listen(t.app);

  it('is refused on POST /plants, naming the header, and nothing is written; sent once with a comma, it is one key', async () => {
    const json = 'Content-Type: application/json';
    assertRefused(await post(origin, '/plants', [AUTH, json, 'Idempotency-Key: a', 'Idempotency-Key: b'], '{"id":1,"name":"Fern"}'));
    assertRefused(await post(origin, '/plants', [AUTH, json, 'Idempotency-Key: a', 'idempotency-key: a'], '{"id":1,"name":"Fern"}'));
    assertRefused(
      await post(origin, '/plants', [AUTH, json, 'Idempotency-Key: a', 'Idempotency-Key: b', 'IDEMPOTENCY-KEY: c'], '{"id":1,"name":"Fern"}'),
      3,
    );
    assert.equal((await t.call('GET', '/plants/1')).statusCode, 404, 'nothing written');
    // Once, "a, b" is a key like any other (printable ASCII), kept and replayed.
    const once = await post(origin, '/plants', [AUTH, json, 'Idempotency-Key: a, b'], '{"id":1,"name":"Fern"}');
    assert.equal(once.status, 200, once.body);
    const replayed = await t.call('POST', '/plants', { body: { id: 1, name: 'Fern' }, headers: { 'idempotency-key': 'a, b' } });
    assert.equal(replayed.headers['idempotent-replayed'], 'true');
  });

  it('is refused on POST /webhooks and POST /plants/import, and nothing is made', async () => {
    assertRefused(
      await post(
        origin,
        '/webhooks',
        [AUTH, 'Content-Type: application/json', 'Idempotency-Key: a', 'Idempotency-Key: b'],
        '{"url":"https://example.com/hook"}',
      ),
    );
    assert.deepEqual((await t.call('GET', '/webhooks')).json(), []);
    assertRefused(
      await post(
        origin,
        '/plants/import',
        [AUTH, 'Content-Type: application/x-ndjson', 'Idempotency-Key: a', 'Idempotency-Key: b'],
        '{"id":7,"name":"Moss"}\n',
      ),
    );
    assert.equal((await t.call('GET', '/plants/7')).statusCode, 404, 'nothing imported');
  });

  it('is answered 401 first without a token: authentication comes before any check of the request', async () => {
    const answer = await post(
      origin,
      '/plants',
      ['Content-Type: application/json', 'Idempotency-Key: a', 'Idempotency-Key: b'],
      '{"id":1,"name":"Fern"}',
    );
    assert.equal(answer.status, 401, answer.body);
  });
});

/**
 * Two Authorization headers are refused, 400 naming the header, in either order: Node keeps the first and
 * drops the others, so that valid-then-bogus was 200 and bogus-then-valid 401, and a proxy or another server
 * reading the last one would judge another token than this service did.
 */
describe('an Authorization header sent more than once', async () => {
  const t = await testApp(after);
  const origin = await listen(t.app);
  const BOGUS = 'Authorization: Bearer not-a-token-of-this-service-0123456789';
  const json = 'Content-Type: application/json';

  function assertRefusedAuth(answer: { status: number; body: string }, times = 2): void {
    assert.equal(answer.status, 400, answer.body);
    assert.deepEqual(JSON.parse(answer.body), {
      error: 400,
      message: `headers.authorization must be sent once, not ${times} times: send one value`,
      code: 'header_repeated',
      field: 'headers.authorization',
    });
  }

  it('is refused in both orders, valid then bogus and bogus then valid, before anything is done', async () => {
    assertRefusedAuth(await post(origin, '/plants', [AUTH, BOGUS, json], '{"id":21,"name":"Fern"}'));
    assertRefusedAuth(await post(origin, '/plants', [BOGUS, AUTH, json], '{"id":22,"name":"Fern"}'));
    for (const id of [21, 22]) assert.equal((await t.call('GET', `/plants/${id}`)).statusCode, 404, 'nothing written');
    assertRefusedAuth(await send(origin, 'GET', '/plants', [AUTH, BOGUS]));
    assertRefusedAuth(await send(origin, 'GET', '/plants', [BOGUS, AUTH]));
  });

  it('is refused the same twice over, in any case of its name, three times, on any route that takes a token', async () => {
    assertRefusedAuth(await send(origin, 'GET', '/plants/1', [AUTH, AUTH]));
    assertRefusedAuth(await send(origin, 'GET', '/token', [AUTH, AUTH.replace('Authorization', 'authorization')]));
    assertRefusedAuth(await send(origin, 'DELETE', '/plants/1', [AUTH.replace('Authorization', 'AUTHORIZATION'), BOGUS, AUTH]), 3);
    assertRefusedAuth(await send(origin, 'GET', '/events', [AUTH, BOGUS]));
    assertRefusedAuth(await send(origin, 'GET', '/tokens', [BOGUS, AUTH]));
  });

  it('once, is taken as ever; on a public route, it is not looked at', async () => {
    assert.equal((await send(origin, 'GET', '/plants', [AUTH])).status, 200);
    assert.equal((await send(origin, 'GET', '/plants', [BOGUS])).status, 401);
    assert.equal((await send(origin, 'GET', '/healthz', [AUTH, BOGUS])).status, 200);
  });
});
