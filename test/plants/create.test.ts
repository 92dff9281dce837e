import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertError, testApp } from '../helpers.js';

/** POST /plants, the specified operation: NewPlant in, Plant (no id) out, create-or-replace. */
describe('POST /plants', async () => {
  const t = await testApp(after);
  let nextId = 1000;
  const freshId = () => nextId++;
  const post = (body: unknown, headers: Record<string, string> = {}) => t.call('POST', '/plants', { body, headers });

  it('answers 200 with the Plant shape only: name and tag, never the id', async () => {
    const id = freshId();
    const res = await post({ id, name: 'Monstera', tag: 'tropical' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json\b/);
    assert.equal(res.payload, '{"name":"Monstera","tag":"tropical"}');
    assert.deepEqual((await t.call('GET', `/plants/${id}`)).json(), { id, name: 'Monstera', tag: 'tropical' });
  });

  it('leaves tag out when the plant has none', async () => {
    const res = await post({ id: freshId(), name: 'Fern' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.payload, '{"name":"Fern"}');
  });

  it('ignores unknown extra fields and never echoes or stores them', async () => {
    const id = freshId();
    const res = await post({ id, name: 'Cactus', colour: 'green', nested: { a: 1 }, extra: null });
    assert.equal(res.statusCode, 200);
    assert.equal(res.payload, '{"name":"Cactus"}');
    assert.equal((await t.call('GET', `/plants/${id}`)).payload, `{"id":${id},"name":"Cactus"}`);
  });

  it('replaces the plant when the id exists (create-or-replace, 200)', async () => {
    const id = freshId();
    assert.equal((await post({ id, name: 'first', tag: 'old' })).statusCode, 200);
    const res = await post({ id, name: 'second' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.payload, '{"name":"second"}');
    assert.deepEqual((await t.call('GET', `/plants/${id}`)).json(), { id, name: 'second' });
  });

  it('with If-None-Match: * only creates: an existing id answers 412 and nothing changes', async () => {
    const id = freshId();
    const created = await post({ id, name: 'original', tag: 'a' }, { 'if-none-match': '*' });
    assert.equal(created.statusCode, 200);
    assertError(await post({ id, name: 'intruder' }, { 'if-none-match': '*' }), 412, String(id));
    assert.deepEqual((await t.call('GET', `/plants/${id}`)).json(), { id, name: 'original', tag: 'a' });
  });

  describe('ids exact end to end', () => {
    const edges = [
      '0',
      '-1',
      '9007199254740991', // 2^53 - 1
      '9007199254740992', // 2^53
      '9007199254740993', // 2^53 + 1
      '-9007199254740993', // -(2^53 + 1)
      '-9007199254740992',
      '1234567890123456789',
      '9223372036854775807', // int64 max
      '-9223372036854775808', // int64 min
      '9223372036854775806',
    ];
    for (const id of edges) {
      it(`keeps ${id} exact in POST, GET /plants/{id} and the list`, async () => {
        const name = `edge ${id}`;
        const res = await post(`{"id": ${id}, "name": ${JSON.stringify(name)}}`);
        assert.equal(res.statusCode, 200, res.payload);
        const one = await t.call('GET', `/plants/${id}`);
        assert.equal(one.statusCode, 200);
        assert.equal(one.payload, `{"id":${id},"name":${JSON.stringify(name)}}`);
        // The list from just before this id: its first entry is this plant, digits intact.
        const before = BigInt(id) - 1n;
        const list = await t.call('GET', before < -(2n ** 63n) ? '/plants?limit=1' : `/plants?limit=1&after=${before}`);
        assert.equal(list.statusCode, 200);
        assert.equal(list.payload, `[{"id":${id},"name":${JSON.stringify(name)}}]`);
      });
    }
  });

  describe('400 for ids outside int64', () => {
    for (const id of ['9223372036854775808', '-9223372036854775809', '1e20', '99999999999999999999', '18446744073709551616']) {
      it(`refuses ${id}`, async () => {
        assertError(await post(`{"id": ${id}, "name": "out of range"}`), 400, 'body.id');
      });
    }
  });

  describe('400 for ids that are not JSON integers (no coercion)', () => {
    for (const id of ['"12"', '1.5', 'null', 'true', 'false', '[]', '{}', '"9223372036854775807"', '-0.5']) {
      it(`refuses ${id}`, async () => {
        assertError(await post(`{"id": ${id}, "name": "not an integer"}`), 400, 'body.id');
      });
    }
    it('refuses a body without an id', async () => {
      assertError(await post({ name: 'no id' }), 400, 'body.id');
    });
  });

  describe('name', () => {
    const cases: Array<[string, unknown]> = [
      ['missing', undefined],
      ['empty', ''],
      ['a number', 5],
      ['null', null],
      ['an array', ['a']],
      ['257 characters', 'n'.repeat(257)],
      // Text every store holds exactly: PostgreSQL cannot store U+0000.
      ['holding U+0000', 'a\u0000b'],
    ];
    for (const [what, name] of cases) {
      it(`400 when ${what}`, async () => {
        assertError(await post({ id: freshId(), name }), 400, 'body.name');
      });
    }
    it('takes 256 characters', async () => {
      const name = 'n'.repeat(256);
      const res = await post({ id: freshId(), name });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { name });
    });
    it('counts characters, not bytes or UTF-16 units', async () => {
      const id = freshId();
      const name = '🌵'.repeat(256); // 256 characters, 512 UTF-16 units, 1024 bytes
      const res = await post({ id, name });
      assert.equal(res.statusCode, 200, res.payload);
      assert.deepEqual((await t.call('GET', `/plants/${id}`)).json(), { id, name });
      assertError(await post({ id: freshId(), name: 'é'.repeat(257) }), 400, 'body.name');
      const accented = 'é'.repeat(256);
      assert.equal((await post({ id: freshId(), name: accented })).statusCode, 200);
    });
  });

  describe('tag', () => {
    it('takes 64 characters', async () => {
      const res = await post({ id: freshId(), name: 'x', tag: 't'.repeat(64) });
      assert.equal(res.statusCode, 200);
    });
    for (const [what, tag] of [
      ['65 characters', 't'.repeat(65)],
      ['null', null],
      ['a number', 7],
      ['an object', { a: 1 }],
      ['holding U+0000', '\u0000'],
    ] as Array<[string, unknown]>) {
      it(`400 when ${what}`, async () => {
        assertError(await post({ id: freshId(), name: 'x', tag }), 400, 'body.tag');
      });
    }
  });

  describe('400 for bodies that are not a JSON object', () => {
    for (const body of ['[]', '[{"id":1,"name":"x"}]', '"plant"', '42', 'null', 'true']) {
      it(`refuses ${body}`, async () => {
        assertError(await post(body), 400, 'body');
      });
    }
    for (const body of ['{bad', '{"id": 1, "name": "x"', '{"id": 01, "name": "x"}', "{'id': 1}", '{"id": 1, "name": "x"} trailing']) {
      it(`refuses invalid JSON ${body}`, async () => {
        assertError(await post(body), 400, /JSON/);
      });
    }
    it('refuses invalid JSON on the exact (long number) path too', async () => {
      assertError(await post('{"id": 12345678901234567890123, "name": '), 400, /JSON/);
    });
    it('refuses an empty body', async () => {
      assertError(await post(''), 400, /body/);
    });
  });

  it('changes nothing when the request is refused', async () => {
    const id = freshId();
    await post({ id, name: 'kept' });
    assertError(await post({ id, name: '' }), 400);
    assertError(await post({ id, name: 'x', tag: null }), 400);
    assert.deepEqual((await t.call('GET', `/plants/${id}`)).json(), { id, name: 'kept' });
  });
});
