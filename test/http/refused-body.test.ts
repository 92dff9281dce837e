import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, describe, it } from 'node:test';
import { listen } from '../events/sse.js';
import { testApp, TOKEN } from '../helpers.js';

/**
 * A body refused before it was read whole (413 over BODY_LIMIT, chunked or with Content-Length; an import
 * over IMPORT_BODY_LIMIT) is answered, and the connection closed only in a way that lets the client read
 * the answer: a client that goes on sending the whole body before it reads gets its 413, never a reset.
 */

const BODY_BYTES = 16 * 2 ** 20;

interface Exchange {
  /** Every byte of the body was written without an error. */
  sentWhole: boolean;
  error: string | undefined;
  answer: string;
}

/**
 * Sends a request with a body of BODY_BYTES (chunked, or with its Content-Length), all of it, before reading
 * anything of the answer (as a simple client, or a fuzzer, does); then reads the answer to the end.
 */
async function sendWholeThenRead(origin: string, path: string, contentType: string, chunked: boolean, fill = 0x20): Promise<Exchange> {
  const { hostname, port } = new URL(origin);
  // Half-open allowed: the server ending its side must not stop this client from sending the rest.
  const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.pause();
  let error: string | undefined;
  socket.on('error', (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const length = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${BODY_BYTES}`;
  socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: ${contentType}\r\n${length}\r\n\r\n`);
  const piece = Buffer.alloc(64 * 1024, fill);
  const frame = chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
  let sent = 0;
  while (sent < BODY_BYTES && error === undefined && !socket.destroyed) {
    const more = socket.write(frame);
    sent += piece.length;
    if (!more) await new Promise<void>((resolve) => (socket.once('drain', resolve), socket.once('close', resolve)));
  }
  if (chunked && error === undefined && !socket.destroyed) socket.write('0\r\n\r\n');
  const sentWhole = sent >= BODY_BYTES && error === undefined;
  socket.end();
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
  socket.resume();
  await closed;
  return { sentWhole, error, answer };
}

describe('a body refused before it is read whole: the answer is readable, the connection closes cleanly', async () => {
  const t = await testApp(after, { config: { importBodyLimit: 1024 * 1024 } });
  const origin = await listen(t.app);

  for (const chunked of [true, false]) {
    const how = chunked ? 'chunked' : 'with Content-Length';
    it(`POST /plants, a body ${how} over BODY_LIMIT: 413 read after the whole body was sent, no reset`, async () => {
      const { sentWhole, error, answer } = await sendWholeThenRead(origin, '/plants', 'application/json', chunked);
      assert.equal(error, undefined, 'no EPIPE nor ECONNRESET');
      assert.ok(sentWhole, 'the client could send its whole body');
      assert.match(answer, /^HTTP\/1\.1 413 /);
      assert.match(answer, /\{"error":413,"message":"body is larger than the limit of 65536 bytes","code":"body_too_large"\}$/);
    });
  }

  it('POST /plants/import over IMPORT_BODY_LIMIT, chunked: 413 read after the whole body was sent, no reset', async () => {
    // Blank lines: no row is too long, so the import reads on until the body passes its limit.
    const { sentWhole, error, answer } = await sendWholeThenRead(origin, '/plants/import', 'application/x-ndjson', true, 0x0a);
    assert.equal(error, undefined, 'no EPIPE nor ECONNRESET');
    assert.ok(sentWhole);
    assert.match(answer, /^HTTP\/1\.1 413 /);
  });

  it('still serves other connections, and a body within the limit on a connection of its own', async () => {
    const res = await fetch(`${origin}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{"id":1,"name":"Fern"}',
    });
    assert.equal(res.status, 200);
  });
});
