import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { listPlants, testApp, TOKEN } from '../helpers.js';
import { exchange, request } from '../reliability/raw-http.js';

/**
 * Why http/transport.ts sets httpAllowHalfOpen: a client that sends a whole request and then closes its
 * sending side (nc, some proxies) must still get the answer of a write that was carried out. With Node's
 * default the server ends the connection as soon as the client's side ends, and the 200 of the stored
 * plant is never written.
 */
test('a client that half-closes after a whole request still gets its answer, and the write is stored once', async () => {
  const t = await testApp(after);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (t.app.server.address() as { port: number }).port;
  const body = '{"id":4242,"name":"Half-closed fern"}';
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const { answers, closedByServer } = await exchange(port, [request('POST', '/plants', headers, body)], { end: true, waitMs: 5000 });
  assert.equal(answers.length, 1, 'the answer was written');
  assert.equal(answers[0]!.status, 200);
  assert.deepEqual(JSON.parse(answers[0]!.body), { name: 'Half-closed fern' });
  assert.ok(closedByServer, 'then the server closes the connection');
  assert.deepEqual((await t.store.plants.get(4242))?.plant, { id: 4242, name: 'Half-closed fern' });
});

test('a keep-alive client that half-closes after two pipelined requests gets both answers', async () => {
  const t = await testApp(after);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (t.app.server.address() as { port: number }).port;
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const { answers } = await exchange(
    port,
    [request('POST', '/plants', headers, '{"id":1,"name":"a"}'), request('POST', '/plants', headers, '{"id":2,"name":"b"}')],
    { end: true, waitMs: 5000 },
  );
  assert.deepEqual(
    answers.map((a) => a.status),
    [200, 200],
  );
  assert.deepEqual(JSON.parse(answers[1]!.body), { name: 'b' });
  assert.deepEqual(await listPlants(t.store.plants, { limit: 10 }), [
    { id: 1, name: 'a' },
    { id: 2, name: 'b' },
  ]);
});
