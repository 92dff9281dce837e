import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertError, testApp } from '../helpers.js';

/** GET, PUT, PATCH and DELETE /plants/{id}: the rest of the resource. */
describe('/plants/{id}', async () => {
  const t = await testApp(after);
  let nextId = 5000;
  const freshId = () => nextId++;
  const create = async (id: number | bigint | string, name = 'plant', tag?: string) => {
    const body = `{"id":${id},"name":${JSON.stringify(name)}${tag === undefined ? '' : `,"tag":${JSON.stringify(tag)}`}}`;
    assert.equal((await t.call('POST', '/plants', { body })).statusCode, 200);
  };
  const MERGE = { 'content-type': 'application/merge-patch+json' };

  describe('GET', () => {
    it('answers {id, name, tag?}', async () => {
      const id = freshId();
      await create(id, 'Aloe', 'succulent');
      const res = await t.call('GET', `/plants/${id}`);
      assert.equal(res.statusCode, 200);
      assert.equal(res.payload, `{"id":${id},"name":"Aloe","tag":"succulent"}`);
    });

    it('404 when there is no such plant', async () => {
      assertError(await t.call('GET', `/plants/${freshId()}`), 404, 'id');
      assertError(await t.call('GET', '/plants/9223372036854775807'), 404, '9223372036854775807');
    });

    for (const id of ['abc', '1.5', '9223372036854775808', '-9223372036854775809', '1e3', '0x10', '%20', '']) {
      it(`400 for the path id "${id}"`, async () => {
        assertError(await t.call('GET', `/plants/${id}`), 400, 'params.id');
      });
    }
  });

  describe('PUT', () => {
    it('creates: 201 with Location, answering the stored plant', async () => {
      const id = freshId();
      const res = await t.call('PUT', `/plants/${id}`, { body: { name: 'Basil', tag: 'herb' } });
      assert.equal(res.statusCode, 201);
      assert.equal(res.headers.location, `/plants/${id}`);
      assert.equal(res.payload, `{"id":${id},"name":"Basil","tag":"herb"}`);
      assert.equal((await t.call('GET', `/plants/${id}`)).payload, res.payload);
    });

    it('replaces: 200, the whole plant (a tag not sent is gone)', async () => {
      const id = freshId();
      await create(id, 'old', 'old-tag');
      const res = await t.call('PUT', `/plants/${id}`, { body: { name: 'new' } });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers.location, undefined);
      assert.equal(res.payload, `{"id":${id},"name":"new"}`);
      assert.equal((await t.call('GET', `/plants/${id}`)).payload, res.payload);
    });

    it('ignores unknown fields and never stores or echoes them', async () => {
      const id = freshId();
      const res = await t.call('PUT', `/plants/${id}`, { body: { name: 'n', colour: 'red', extra: null } });
      assert.equal(res.statusCode, 201);
      assert.equal(res.payload, `{"id":${id},"name":"n"}`);
      assert.equal((await t.call('GET', `/plants/${id}`)).payload, res.payload);
    });

    it('takes an id in the body equal to the path, big ids included', async () => {
      const id = '9223372036854775806';
      const res = await t.call('PUT', `/plants/${id}`, { body: `{"id":${id},"name":"big"}` });
      assert.equal(res.statusCode, 201, res.payload);
      assert.equal(res.payload, `{"id":${id},"name":"big"}`);
      const small = freshId();
      assert.equal((await t.call('PUT', `/plants/${small}`, { body: { id: small, name: 's' } })).statusCode, 201);
    });

    it('400 when the body id differs from the path, and nothing changes', async () => {
      const id = freshId();
      await create(id, 'kept');
      assertError(await t.call('PUT', `/plants/${id}`, { body: { id: id + 1, name: 'x' } }), 400, 'id');
      // Differs only beyond 2^53: must not be taken for equal after rounding.
      assertError(await t.call('PUT', '/plants/9007199254740993', { body: '{"id":9007199254740992,"name":"x"}' }), 400, 'id');
      assert.equal((await t.call('GET', `/plants/${id}`)).payload, `{"id":${id},"name":"kept"}`);
      assertError(await t.call('GET', '/plants/9007199254740993'), 404);
    });

    for (const [what, body, field] of [
      ['tag null', { name: 'x', tag: null }, 'body.tag'],
      ['tag too long', { name: 'x', tag: 't'.repeat(65) }, 'body.tag'],
      ['name missing', { tag: 'x' }, 'body.name'],
      ['name empty', { name: '' }, 'body.name'],
      ['name null', { name: null }, 'body.name'],
      ['id a string', { id: '1', name: 'x' }, 'body.id'],
      ['body an array', [], 'body'],
    ] as Array<[string, unknown, string]>) {
      it(`400 when ${what}`, async () => {
        assertError(await t.call('PUT', `/plants/${freshId()}`, { body }), 400, field);
      });
    }

    it('400 for a path id that is not an int64', async () => {
      assertError(await t.call('PUT', '/plants/abc', { body: { name: 'x' } }), 400, 'params.id');
    });
  });

  describe('PATCH', () => {
    it('changes the fields sent (application/merge-patch+json) and answers the stored plant', async () => {
      const id = freshId();
      await create(id, 'before', 'keep');
      const res = await t.call('PATCH', `/plants/${id}`, { body: { name: 'after' }, headers: MERGE });
      assert.equal(res.statusCode, 200);
      assert.equal(res.payload, `{"id":${id},"name":"after","tag":"keep"}`);
      assert.equal((await t.call('GET', `/plants/${id}`)).payload, res.payload);
    });

    it('accepts plain application/json too', async () => {
      const id = freshId();
      await create(id, 'x');
      const res = await t.call('PATCH', `/plants/${id}`, { body: { tag: 'added' } });
      assert.equal(res.statusCode, 200);
      assert.equal(res.payload, `{"id":${id},"name":"x","tag":"added"}`);
    });

    it('"tag": null removes the tag', async () => {
      const id = freshId();
      await create(id, 'x', 'gone');
      const res = await t.call('PATCH', `/plants/${id}`, { body: { tag: null }, headers: MERGE });
      assert.equal(res.statusCode, 200);
      assert.equal(res.payload, `{"id":${id},"name":"x"}`);
      assert.equal((await t.call('GET', `/plants/${id}`)).payload, res.payload);
    });

    it('{} leaves the plant as it is (200)', async () => {
      const id = freshId();
      await create(id, 'same', 't');
      const res = await t.call('PATCH', `/plants/${id}`, { body: {}, headers: MERGE });
      assert.equal(res.statusCode, 200);
      assert.equal(res.payload, `{"id":${id},"name":"same","tag":"t"}`);
    });

    it('ignores unknown fields', async () => {
      const id = freshId();
      await create(id, 'same');
      const res = await t.call('PATCH', `/plants/${id}`, { body: { colour: 'red' }, headers: MERGE });
      assert.equal(res.statusCode, 200);
      assert.equal(res.payload, `{"id":${id},"name":"same"}`);
    });

    it('works on big ids, with the same id in the body', async () => {
      await create('-9223372036854775808', 'min');
      const res = await t.call('PATCH', '/plants/-9223372036854775808', { body: '{"id":-9223372036854775808,"tag":"low"}', headers: MERGE });
      assert.equal(res.statusCode, 200, res.payload);
      assert.equal(res.payload, '{"id":-9223372036854775808,"name":"min","tag":"low"}');
    });

    it('404 when there is no such plant, and does not create it', async () => {
      const id = freshId();
      assertError(await t.call('PATCH', `/plants/${id}`, { body: { name: 'x' }, headers: MERGE }), 404, String(id));
      assertError(await t.call('GET', `/plants/${id}`), 404);
    });

    for (const [what, body, field] of [
      ['"name": null', { name: null }, 'body.name'],
      ['"name": ""', { name: '' }, 'body.name'],
      ['tag too long', { tag: 't'.repeat(65) }, 'body.tag'],
      ['tag a number', { tag: 1 }, 'body.tag'],
      ['body an array', [{ name: 'x' }], 'body'],
      ['body null', null, 'body'],
    ] as Array<[string, unknown, string]>) {
      it(`400 when ${what}, and nothing changes`, async () => {
        const id = freshId();
        await create(id, 'kept', 'tag');
        assertError(await t.call('PATCH', `/plants/${id}`, { body: JSON.stringify(body), headers: MERGE }), 400, field);
        assert.equal((await t.call('GET', `/plants/${id}`)).payload, `{"id":${id},"name":"kept","tag":"tag"}`);
      });
    }

    it('400 when the body id differs from the path', async () => {
      const id = freshId();
      await create(id, 'kept');
      assertError(await t.call('PATCH', `/plants/${id}`, { body: { id: id + 1 }, headers: MERGE }), 400, 'id');
      assert.equal((await t.call('GET', `/plants/${id}`)).payload, `{"id":${id},"name":"kept"}`);
    });

    it('400 for a path id that is not an int64', async () => {
      assertError(await t.call('PATCH', '/plants/9223372036854775808', { body: {}, headers: MERGE }), 400, 'params.id');
    });
  });

  describe('DELETE', () => {
    it('204 with no body, then the plant is gone (404 to GET and to another DELETE)', async () => {
      const id = freshId();
      await create(id, 'doomed');
      const res = await t.call('DELETE', `/plants/${id}`);
      assert.equal(res.statusCode, 204);
      assert.equal(res.payload, '');
      assert.equal(res.headers['content-type'], undefined);
      assertError(await t.call('GET', `/plants/${id}`), 404);
      assertError(await t.call('DELETE', `/plants/${id}`), 404, String(id));
    });

    it('deletes big ids exactly, leaving their neighbours', async () => {
      await create('9007199254740993', 'odd');
      await create('9007199254740992', 'even');
      assert.equal((await t.call('DELETE', '/plants/9007199254740993')).statusCode, 204);
      assert.equal((await t.call('GET', '/plants/9007199254740992')).payload, '{"id":9007199254740992,"name":"even"}');
    });

    it('400 for a path id that is not an int64', async () => {
      assertError(await t.call('DELETE', '/plants/1.5'), 400, 'params.id');
    });
  });
});
