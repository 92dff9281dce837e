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
async function post(origin: string, path: string, headerLines: string[], body: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(origin);
  const socket = connect(Number(port), hostname);
  const head = [
    `POST ${path} HTTP/1.1`,
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
