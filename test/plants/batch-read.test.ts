import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertError, testApp } from '../helpers.js';

const BIG = 2n ** 53n + 1n;
const MAX = 2n ** 63n - 1n;

describe('GET /plants?id=…: a batch read', async () => {
  const t = await testApp(after);
  for (const body of [
    '{"id":1,"name":"Fern","tag":"shade"}',
    '{"id":2,"name":"Moss"}',
    '{"id":3,"name":"Ivy"}',
    `{"id":${BIG},"name":"Big"}`,
    `{"id":${MAX},"name":"Max"}`,
    `{"id":-${MAX},"name":"Min"}`,
  ]) {
    assert.equal((await t.call('POST', '/plants', { body })).statusCode, 200);
  }

  it('answers the plants in the order asked, in the list shape, ids exact', async () => {
    const res = await t.call('GET', `/plants?id=3&id=${MAX}&id=1&id=${BIG}&id=-${MAX}`);
    assert.equal(res.statusCode, 200, res.payload);
    assert.match(String(res.headers['content-type']), /^application\/json\b/);
    assert.equal(
      res.payload,
      `[{"id":3,"name":"Ivy"},{"id":${MAX},"name":"Max"},{"id":1,"name":"Fern","tag":"shade"},{"id":${BIG},"name":"Big"},{"id":-${MAX},"name":"Min"}]`,
    );
    assert.equal(res.headers['missing-ids'], undefined, 'nothing missing, no header');
    assert.equal(res.headers.link, undefined, 'one answer, no next page');
  });

  it('one id is a list of one', async () => {
    const res = await t.call('GET', '/plants?id=2');
    assert.equal(res.payload, '[{"id":2,"name":"Moss"}]');
  });

  it('leaves missing plants out and names them in Missing-Ids, in the order asked, each once', async () => {
    const res = await t.call('GET', `/plants?id=404&id=2&id=${BIG - 1n}&id=404&id=0`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.payload, '[{"id":2,"name":"Moss"}]');
    assert.equal(res.headers['missing-ids'], `404, ${BIG - 1n}, 0`);
    const none = await t.call('GET', '/plants?id=404');
    assert.equal(none.payload, '[]');
    assert.equal(none.headers['missing-ids'], '404');
  });

  it('answers a repeated id once, at its first place', async () => {
    const res = await t.call('GET', '/plants?id=2&id=1&id=2&id=1');
    assert.equal(res.payload, '[{"id":2,"name":"Moss"},{"id":1,"name":"Fern","tag":"shade"}]');
  });

  it('takes up to 100 ids; 101 is 400 naming id', async () => {
    const hundred = Array.from({ length: 100 }, (_, i) => `id=${i}`).join('&');
    const res = await t.call('GET', `/plants?${hundred}`);
    assert.equal(res.statusCode, 200, res.payload);
    assert.deepEqual(
      res.json<Array<{ id: number }>>().map((plant) => plant.id),
      [1, 2, 3],
    );
    assertError(await t.call('GET', `/plants?${hundred}&id=100`), 400, 'querystring.id');
  });

  it('refuses a malformed id with 400 naming id: not digits, beyond int64, empty, a fraction', async () => {
    for (const bad of ['abc', '9223372036854775808', '-9223372036854775809', '', '1.5', '1e3', '+1', ' 1']) {
      const message = assertError(await t.call('GET', `/plants?id=1&id=${encodeURIComponent(bad)}`), 400, 'querystring.id');
      assert.match(message, /integer/, `id=${bad}: ${message}`);
    }
  });

  it('refuses the list parameters that choose, order or page: 400 naming each with id', async () => {
    for (const other of ['q=fern', 'tag=shade', 'sort=name', 'limit=5', 'after=1', 'cursor=abc']) {
      const name = other.split('=')[0]!;
      const message = assertError(await t.call('GET', `/plants?id=1&${other}`), 400, 'querystring.id');
      assert.ok(message.includes(`querystring.${name}`), message);
    }
  });

  it('answers NDJSON and CSV as asked, in the order asked', async () => {
    const ndjson = await t.call('GET', `/plants?id=${BIG}&id=1&id=9`, { headers: { accept: 'application/x-ndjson' } });
    assert.equal(ndjson.statusCode, 200);
    assert.match(String(ndjson.headers['content-type']), /^application\/x-ndjson\b/);
    assert.equal(ndjson.payload, `{"id":${BIG},"name":"Big"}\n{"id":1,"name":"Fern","tag":"shade"}\n`);
    assert.equal(ndjson.headers['missing-ids'], '9');
    const csv = await t.call('GET', '/plants?id=2&id=1&format=csv');
    assert.equal(csv.payload, 'id,name,tag\r\n2,Moss,\r\n1,Fern,shade\r\n');
    assert.equal(csv.headers['content-disposition'], 'attachment; filename="plants.csv"');
  });

  it('has a weak ETag that follows its plants, and 304 for If-None-Match', async () => {
    const first = await t.call('GET', '/plants?id=1&id=2');
    const etag = String(first.headers.etag);
    assert.match(etag, /^W\//);
    assert.equal((await t.call('GET', '/plants?id=1&id=2', { headers: { 'if-none-match': etag } })).statusCode, 304);
    await t.call('PATCH', '/plants/2', { body: { tag: 'wet' } });
    const changed = await t.call('GET', '/plants?id=1&id=2', { headers: { 'if-none-match': etag } });
    assert.equal(changed.statusCode, 200);
    assert.notEqual(changed.headers.etag, etag);
    await t.call('PATCH', '/plants/2', { body: { tag: null } });
  });

  it('needs plants:read, as the list does', async () => {
    const writer = await t.tokenWith('plants:write');
    assertError(await t.call('GET', '/plants?id=1', { token: writer }), 403);
  });

  it('is documented: the id parameter (at most 100), Missing-Ids', async () => {
    const doc = (await t.call('GET', '/openapi.json', { token: null })).json();
    const op = doc.paths['/plants'].get;
    const id = op.parameters.find((p: { in: string; name: string }) => p.in === 'query' && p.name === 'id');
    assert.equal(id.schema.maxItems, 100);
    assert.equal(id.schema.items.format, 'int64');
    assert.ok(op.responses['200'].headers['Missing-Ids']);
  });
});
