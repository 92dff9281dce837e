import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertError, testApp } from '../helpers.js';

const ETAG = /^"\d+"$/;

describe('versions, ETags and conditional requests (RFC 9110 §13)', async () => {
  const t = await testApp(after);
  let next = 1000;
  /** A fresh plant; its ETag. */
  async function plant(name = 'Fern'): Promise<{ id: number; etag: string }> {
    const id = next++;
    const res = await t.call('PUT', `/plants/${id}`, { body: { name } });
    assert.equal(res.statusCode, 201);
    return { id, etag: String(res.headers.etag) };
  }

  it('every read and write answers a strong ETag; every write changes it, even one storing the same content', async () => {
    const { id, etag } = await plant();
    assert.match(etag, ETAG);
    const read = await t.call('GET', `/plants/${id}`);
    assert.equal(read.headers.etag, etag);
    const same = await t.call('PUT', `/plants/${id}`, { body: { name: 'Fern' } });
    assert.equal(same.statusCode, 200);
    assert.notEqual(same.headers.etag, etag, 'an identical PUT is a new version');
    const posted = await t.call('POST', '/plants', { body: { id, name: 'Fern' } });
    assert.match(String(posted.headers.etag), ETAG);
    assert.notEqual(posted.headers.etag, same.headers.etag, 'a POST replace too');
    assert.deepEqual(posted.json(), { name: 'Fern' }, 'the POST answer keeps its specified body');
    const patched = await t.call('PATCH', `/plants/${id}`, { body: {} });
    assert.notEqual(patched.headers.etag, posted.headers.etag, 'an empty patch too');
    assert.equal((await t.call('GET', `/plants/${id}`)).headers.etag, patched.headers.etag);
  });

  it('GET with If-None-Match naming the current ETag (or *) answers 304 with the ETag and no body; otherwise 200', async () => {
    const { id, etag } = await plant();
    for (const header of [etag, `"1", ${etag}`, `W/${etag}`, '*']) {
      const res = await t.call('GET', `/plants/${id}`, { headers: { 'if-none-match': header } });
      assert.equal(res.statusCode, 304, header);
      assert.equal(res.payload, '');
      assert.equal(res.headers.etag, etag);
    }
    const stale = await t.call('GET', `/plants/${id}`, { headers: { 'if-none-match': '"999999999"' } });
    assert.equal(stale.statusCode, 200);
    assert.equal(stale.headers.etag, etag);
    assertError(await t.call('GET', '/plants/999999', { headers: { 'if-none-match': '*' } }), 404);
  });

  it('PUT, PATCH and DELETE with If-Match: a current ETag (in a list, or *) goes through; otherwise 412, nothing changed', async () => {
    const { id, etag } = await plant('original');
    for (const [method, body] of [
      ['PUT', { name: 'changed' }],
      ['PATCH', { name: 'changed' }],
      ['DELETE', undefined],
    ] as const) {
      for (const header of ['"1"', `W/${etag}`, '"garbage"', '"a", "b"']) {
        const res = await t.call(method, `/plants/${id}`, { body, headers: { 'if-match': header } });
        const message = assertError(res, 412);
        assert.match(message, /If-Match/);
      }
    }
    assert.deepEqual((await t.call('GET', `/plants/${id}`)).json(), { id, name: 'original' }, 'nothing changed');

    const put = await t.call('PUT', `/plants/${id}`, { body: { name: 'v2' }, headers: { 'if-match': `"1", ${etag}` } });
    assert.equal(put.statusCode, 200);
    const patch = await t.call('PATCH', `/plants/${id}`, { body: { tag: 't' }, headers: { 'if-match': String(put.headers.etag) } });
    assert.equal(patch.statusCode, 200);
    assert.deepEqual(patch.json(), { id, name: 'v2', tag: 't' });
    assertError(await t.call('DELETE', `/plants/${id}`, { headers: { 'if-match': String(put.headers.etag) } }), 412);
    const star = await t.call('PATCH', `/plants/${id}`, { body: { tag: 'u' }, headers: { 'if-match': '*' } });
    assert.equal(star.statusCode, 200);
    assert.equal((await t.call('DELETE', `/plants/${id}`, { headers: { 'if-match': String(star.headers.etag) } })).statusCode, 204);
  });

  it('an entity tag without its quotes (If-Match: 17) is 400 saying tags are quoted, on every write and on a read', async () => {
    const { id, etag } = await plant('original');
    const bare = etag.slice(1, -1);
    const said = /^headers\.if-match must be \* or entity tags, each in its double quotes as the ETag header gives it \("17", not 17\)/;
    for (const header of [bare, `${etag}, ${bare}`, `W/${bare}`, `'${bare}'`, `"${bare}`, '**', '* , "1"']) {
      for (const [method, url, body] of [
        ['PUT', `/plants/${id}`, { name: 'changed' }],
        ['PATCH', `/plants/${id}`, { name: 'changed' }],
        ['DELETE', `/plants/${id}`, undefined],
        ['POST', '/plants', { id, name: 'changed' }],
      ] as const) {
        const message = assertError(await t.call(method, url, { body, headers: { 'if-match': header } }), 400);
        assert.match(message, said, `${method} If-Match: ${header}`);
      }
      const read = assertError(await t.call('GET', `/plants/${id}`, { headers: { 'if-none-match': header } }), 400);
      assert.match(read, /^headers\.if-none-match must be \* or entity tags, each in its double quotes/, header);
    }
    assert.deepEqual((await t.call('GET', `/plants/${id}`)).json(), { id, name: 'original' }, 'nothing changed');
    // What the grammar allows stays allowed: spaces around the list and its commas, weak tags, an empty tag.
    for (const [header, status] of [
      [` ${etag} `, 200],
      [`"1" ,${etag}`, 200],
      [`W/"1",  ${etag}`, 200],
      [' * ', 200],
      ['""', 412],
      [`W/${etag}`, 412],
    ] as const) {
      const current = String((await t.call('PUT', `/plants/${id}`, { body: { name: 'original' } })).headers.etag);
      const res = await t.call('PATCH', `/plants/${id}`, { body: {}, headers: { 'if-match': header.replace(etag, current) } });
      assert.equal(res.statusCode, status, `${header}: ${res.payload}`);
      const read = await t.call('GET', `/plants/${id}`, { headers: { 'if-none-match': header.replace(etag, '"0"') } });
      assert.equal(read.statusCode, header.includes('*') ? 304 : 200, header);
    }
  });

  it('If-Match: * and no plant is 412 on PUT, PATCH and DELETE (not a create, not a 404)', async () => {
    for (const [method, body] of [
      ['PUT', { name: 'x' }],
      ['PATCH', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      assertError(await t.call(method, '/plants/777777', { body, headers: { 'if-match': '*' } }), 412, '777777');
      assertError(await t.call(method, '/plants/777777', { body, headers: { 'if-match': '"5"' } }), 412);
    }
    assertError(await t.call('GET', '/plants/777777'), 404);
  });

  it('PUT with If-None-Match: * only creates: 412 when the plant exists', async () => {
    const res = await t.call('PUT', '/plants/888888', { body: { name: 'new' }, headers: { 'if-none-match': '*' } });
    assert.equal(res.statusCode, 201);
    const again = await t.call('PUT', '/plants/888888', { body: { name: 'other' }, headers: { 'if-none-match': '*' } });
    assertError(again, 412, 'already exists');
    assert.deepEqual((await t.call('GET', '/plants/888888')).json(), { id: 888888, name: 'new' });
  });

  it('PUT, PATCH, DELETE and POST with If-None-Match naming the current ETag (weakly, in a list) are 412; another one goes through', async () => {
    for (const [method, body] of [
      ['PUT', { name: 'changed' }],
      ['PATCH', { name: 'changed' }],
      ['DELETE', undefined],
      ['POST', { name: 'changed' }],
    ] as const) {
      const { id, etag } = await plant('original');
      const url = method === 'POST' ? '/plants' : `/plants/${id}`;
      const sent = method === 'POST' ? { ...body, id } : body;
      for (const header of [etag, `W/${etag}`, `"1", ${etag}`, `"x", W/${etag}`]) {
        const res = await t.call(method, url, { body: sent, headers: { 'if-none-match': header } });
        assertError(res, 412, `the plant with id ${id} is at a version named by If-None-Match`, 'precondition_failed');
      }
      const both = await t.call(method, url, { body: sent, headers: { 'if-match': etag, 'if-none-match': etag } });
      assertError(both, 412, 'If-None-Match', 'precondition_failed');
      assert.deepEqual((await t.call('GET', `/plants/${id}`)).json(), { id, name: 'original' }, `${method}: nothing changed`);
      const other = await t.call(method, url, { body: sent, headers: { 'if-none-match': '"1", "x"', 'if-match': etag } });
      assert.equal(other.statusCode, method === 'DELETE' ? 204 : 200, `${method}: ${other.payload}`);
    }
    // No plant is at no version: a PUT creates it; a PATCH or DELETE finds nothing.
    const created = await t.call('PUT', '/plants/666666', { body: { name: 'new' }, headers: { 'if-none-match': '"1"' } });
    assert.equal(created.statusCode, 201);
    assertError(await t.call('PATCH', '/plants/666665', { body: {}, headers: { 'if-none-match': '"1"' } }), 404);
    assertError(await t.call('DELETE', '/plants/666665', { headers: { 'if-none-match': '"1"' } }), 404);
    assertError(await t.call('PUT', '/plants/666666', { body: { name: 'x' }, headers: { 'if-none-match': 'abc' } }), 400, 'headers.if-none-match');
  });

  it('PATCH and DELETE with If-None-Match: * are 412 for a plant that exists, 404 for none (412 with a failing If-Match)', async () => {
    const { id, etag } = await plant('original');
    for (const [method, body] of [
      ['PATCH', { name: 'changed' }],
      ['DELETE', undefined],
    ] as const) {
      assertError(await t.call(method, `/plants/${id}`, { body, headers: { 'if-none-match': '*' } }), 412, 'If-None-Match: *', 'plant_exists');
      const both = await t.call(method, `/plants/${id}`, { body, headers: { 'if-none-match': '*', 'if-match': '"1"' } });
      assertError(both, 412, 'If-Match', 'precondition_failed');
      assertError(await t.call(method, '/plants/666664', { body, headers: { 'if-none-match': '*' } }), 404);
      const missing = await t.call(method, '/plants/666664', { body, headers: { 'if-none-match': '*', 'if-match': '*' } });
      assertError(missing, 412, 'If-Match: *', 'precondition_failed');
    }
    const read = await t.call('GET', `/plants/${id}`);
    assert.deepEqual([read.json(), read.headers.etag], [{ id, name: 'original' }, etag], 'nothing changed');
  });

  it('GET and HEAD with If-Match: 412 unless it names the current ETag (strongly) or is *; judged before If-None-Match', async () => {
    const { id, etag } = await plant();
    for (const method of ['GET', 'HEAD'] as const) {
      for (const header of ['"1"', `W/${etag}`, '"a", "b"']) {
        const res = await t.call(method, `/plants/${id}`, { headers: { 'if-match': header } });
        assert.equal(res.statusCode, 412, `${method} If-Match: ${header}`);
        if (method === 'GET') assertError(res, 412, 'If-Match', 'precondition_failed');
      }
      for (const header of [etag, `"1", ${etag}`, '*']) {
        assert.equal((await t.call(method, `/plants/${id}`, { headers: { 'if-match': header } })).statusCode, 200, header);
      }
      const stale = await t.call(method, `/plants/${id}`, { headers: { 'if-match': '"1"', 'if-none-match': etag } });
      assert.equal(stale.statusCode, 412, 'If-Match wins over If-None-Match');
      const current = await t.call(method, `/plants/${id}`, { headers: { 'if-match': etag, 'if-none-match': etag } });
      assert.equal(current.statusCode, 304);
    }
    assertError(await t.call('GET', `/plants/${id}`, { headers: { 'if-match': 'abc' } }), 400, 'headers.if-match');
    assertError(await t.call('GET', '/plants/666663', { headers: { 'if-match': '"1"' } }), 404);
  });

  it('of N concurrent PUTs with the same If-Match exactly one wins, the others get 412', async () => {
    const { id, etag } = await plant();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => t.call('PUT', `/plants/${id}`, { body: { name: `writer ${i}` }, headers: { 'if-match': etag } })),
    );
    const statuses = answers.map((a) => a.statusCode).sort();
    assert.deepEqual(statuses, [200, ...Array.from({ length: 11 }, () => 412)]);
    const winner = answers.find((a) => a.statusCode === 200)!;
    assert.deepEqual((await t.call('GET', `/plants/${id}`)).json(), winner.json());
  });

  it('the OpenAPI document shows the conditional headers, ETag, 304 and 412', async () => {
    const doc = (await t.call('GET', '/openapi.json', { token: null })).json();
    const get = doc.paths['/plants/{id}'].get;
    for (const name of ['if-none-match', 'if-match'])
      assert.ok(
        get.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === name),
        name,
      );
    assert.ok(get.responses['412'], 'a read answers 412 for its If-Match');
    assert.ok(get.responses['304'].headers.ETag);
    assert.ok(get.responses['200'].headers.ETag);
    for (const method of ['put', 'patch', 'delete']) {
      const op = doc.paths['/plants/{id}'][method];
      assert.ok(
        op.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'if-match'),
        method,
      );
      assert.ok(
        op.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'if-none-match'),
        method,
      );
      assert.ok(op.responses['412'], method);
    }
  });
});
