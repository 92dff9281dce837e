import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, describe, it } from 'node:test';
import { testApp, TOKEN } from '../helpers.js';
import { until } from '../toolkit.js';
import { portOf, rawBytes } from './raw-exchange.js';

/**
 * Pipelined requests (several sent before the first answer, on one connection), as RFC 9112 §9.3.2 has
 * them: answered in order, and carried out in order where any of them is not safe, so that a request sees
 * the effect of every write sent before it. A malformed request after valid ones is refused after their
 * answers, never in their place; after a request that says `Connection: close`, nothing more is carried out.
 */

interface Answer {
  status: number;
  head: string;
  body: string;
}

/**
 * The answers in a raw exchange's bytes, in order (each with a Content-Length, or none for 204 and 304);
 * the answers to HEAD requests, whose Content-Length is the GET's, have no body.
 */
function answersIn(text: string, isHead: (index: number) => boolean = () => false): Answer[] {
  const answers: Answer[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    assert.notEqual(end, -1, `an answer's head is cut short: ${rest}`);
    const head = rest.slice(0, end);
    const length = isHead(answers.length) ? 0 : Number(/^content-length: (\d+)$/im.exec(head)?.[1] ?? 0);
    answers.push({ status: Number(head.split(' ')[1]), head, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  assert.equal(rest, '', 'nothing but answers on the connection');
  return answers;
}

describe('pipelined requests', async () => {
  const t = await testApp(after);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = portOf(t.app.server);
  let nextId = 100;
  const plant = async (name: string) => {
    const id = nextId++;
    assert.equal((await t.call('PUT', `/plants/${id}`, { body: { name } })).statusCode, 201);
    return id;
  };
  const request = (method: string, path: string, body?: object, headers: readonly string[] = []) => {
    const text = body === undefined ? '' : JSON.stringify(body);
    const type = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
    const content = body === undefined ? [] : [`Content-Type: ${type}`, `Content-Length: ${Buffer.byteLength(text)}`];
    const fields = ['Host: x', `Authorization: Bearer ${TOKEN}`, ...content, ...headers];
    return `${method} ${path} HTTP/1.1\r\n${fields.map((field) => `${field}\r\n`).join('')}\r\n${text}`;
  };
  /** Sends the requests in one write (the last says Connection: close, or is refused) and reads until the close. */
  const rawText = (requests: readonly string[]) => rawBytes(port, requests.join(''));
  const closing = ['Connection: close'];
  const nameOf = (answer: Answer | undefined) => (JSON.parse(answer?.body ?? '{}') as { name?: string }).name;

  it('a GET after a PUT reads what the PUT wrote, each time', async () => {
    for (let round = 0; round < 5; round++) {
      const id = await plant('orig');
      const answers = answersIn(
        await rawText([request('PUT', `/plants/${id}`, { name: 'new' }), request('GET', `/plants/${id}`, undefined, closing)]),
      );
      assert.deepEqual(
        answers.map((answer) => answer.status),
        [200, 200],
      );
      assert.equal(nameOf(answers[1]), 'new');
    }
  });

  it('a PATCH then a DELETE: 200 then 204 (the DELETE does not overtake the PATCH)', async () => {
    for (let round = 0; round < 5; round++) {
      const id = await plant('orig');
      const answers = answersIn(
        await rawText([request('PATCH', `/plants/${id}`, { name: 'patched' }), request('DELETE', `/plants/${id}`, undefined, closing)]),
      );
      assert.deepEqual(
        answers.map((answer) => answer.status),
        [200, 204],
      );
      assert.equal(nameOf(answers[0]), 'patched');
    }
  });

  it('a GET after a DELETE: 404', async () => {
    const id = await plant('orig');
    const answers = answersIn(await rawText([request('DELETE', `/plants/${id}`), request('GET', `/plants/${id}`, undefined, closing)]));
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [204, 404],
    );
  });

  it('forty writes of one plant, a DELETE and a PUT: answered and carried out in order', async () => {
    const id = await plant('orig');
    const writes = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0 ? request('PUT', `/plants/${id}`, { name: `put ${i}` }) : request('PATCH', `/plants/${id}`, { name: `patch ${i}` }),
    );
    const answers = answersIn(
      await rawText([
        ...writes,
        request('DELETE', `/plants/${id}`),
        request('PUT', `/plants/${id}`, { name: 'last' }),
        request('GET', `/plants/${id}`, undefined, closing),
      ]),
    );
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [...writes.map(() => 200), 204, 201, 200],
    );
    answers.slice(0, 40).forEach((answer, i) => assert.equal(nameOf(answer), i % 2 === 0 ? `put ${i}` : `patch ${i}`));
    assert.equal(nameOf(answers[42]), 'last');
  });

  it('safe requests pipelined after a write all see it, answered in order', async () => {
    const id = await plant('orig');
    const reads = Array.from({ length: 30 }, (_, i) => request(i % 3 === 2 ? 'HEAD' : 'GET', `/plants/${id}`));
    const answers = answersIn(
      await rawText([request('PUT', `/plants/${id}`, { name: 'new' }), ...reads, request('GET', `/plants/${id}`, undefined, closing)]),
      (index) => index > 0 && (index - 1) % 3 === 2,
    );
    assert.equal(answers.length, 32);
    const tag = /^etag: (.*)$/im.exec(answers[0]?.head ?? '')?.[1];
    for (const answer of answers.slice(1)) {
      assert.equal(answer.status, 200);
      assert.equal(/^etag: (.*)$/im.exec(answer.head)?.[1], tag);
    }
  });

  it('a malformed request after valid writes: their answers first, then the 400 and the close', async () => {
    const first = await plant('orig');
    const second = await plant('orig');
    const answers = answersIn(
      await rawText([request('PUT', `/plants/${first}`, { name: 'one' }), request('PUT', `/plants/${second}`, { name: 'two' }), 'BLAH\r\n\r\n']),
    );
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 200, 400],
    );
    assert.equal(nameOf(answers[0]), 'one');
    assert.equal(nameOf(answers[1]), 'two');
    assert.equal((JSON.parse(answers[2]?.body ?? '{}') as { code?: string }).code, 'invalid_request');
    assert.match(answers[2]?.head ?? '', /^connection: close$/im);
  });

  it('a malformed Content-Length after a GET: the GET answered, then the 400', async () => {
    const id = await plant('orig');
    const answers = answersIn(await rawText([request('GET', `/plants/${id}`), `PUT /plants/${id} HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n`]));
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 400],
    );
    assert.equal(nameOf(answers[0]), 'orig');
  });

  it('after a request saying Connection: close, nothing more is carried out', async () => {
    const id = await plant('orig');
    const later = await plant('orig');
    const answers = answersIn(
      await rawText([
        request('GET', `/plants/${id}`),
        request('PUT', `/plants/${id}`, { name: 'closing' }, closing),
        request('PUT', `/plants/${later}`, { name: 'after the close' }),
      ]),
    );
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 200],
    );
    assert.match(answers[1]?.head ?? '', /^connection: close$/im);
    assert.equal(nameOf(answers[1]), 'closing');
    assert.equal((JSON.parse((await t.call('GET', `/plants/${later}`)).body) as { name: string }).name, 'orig');
  });
});

describe('pipelined requests while the process stops (a drain, or a reload’s handover)', async () => {
  const t = await testApp(after, { config: { rateLimitPerMinute: 1000 } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = portOf(t.app.server);
  /** What is left of the token's budget: each request the app takes counts, before anything else is done for it. */
  const left = async () => Number((await t.call('GET', '/plants?limit=1')).headers['ratelimit-remaining']);

  it('after the answer that closes the connection, nothing more is taken: the client sends it again, elsewhere', async () => {
    assert.equal((await t.call('PUT', '/plants/1', { body: { name: 'orig' } })).statusCode, 201);
    // A keep-alive connection, used before the process began to stop.
    const socket = connect(port, '127.0.0.1');
    let received = '';
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => received.includes('"status":"ok"'), 'the first answer');
    received = '';
    // Within one window of the rate limit, from here to the last count.
    await until(() => Date.now() % 60_000 < 45_000, 'the rate-limit window to be far from its end', { timeoutMs: 20_000, everyMs: 200 });
    const before = await left();
    t.app.stopping({ leaving: false });
    // A probe (counted by nothing), then a DELETE.
    socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nDELETE /plants/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    await closed;
    const answers = answersIn(received);
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200],
    );
    assert.match(answers[0]?.head ?? '', /^connection: close$/im);
    assert.equal(await left(), before - 1, 'the DELETE was not taken: only this look counted');
    assert.equal((await t.call('GET', '/plants/1')).statusCode, 200, 'the plant is still there');
  });
});
